import SchemaBuilder from '@pothos/core';
import type { Context } from '../../kernel/context.ts';
import type { ClientScope } from '../../kernel/principals.ts';

/**
 * What every resolver of `/client/graphql` gets: the call context the pipeline built for the
 * request (authenticated client, device, request id: as a REST call's), for running client
 * procedures through a caller, and the verified caller's scope (one per request).
 */
export interface GraphQLContext {
  call: Context;
  scope: ClientScope;
}

/**
 * The one code-first builder of the client GraphQL schema. Each area registers its types and
 * fields in its own file (imported by schema.ts); resolvers call the same services as every
 * other surface. `DateTime` is an ISO-8601 UTC string, as the widgets' client types declare.
 */
export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  Scalars: { DateTime: { Input: string; Output: string } };
  DefaultFieldNullability: false;
}>({ defaultFieldNullability: false });

builder.scalarType('DateTime', {
  description: 'An ISO-8601 UTC timestamp.',
  serialize: (value) => value,
  parseValue: (value) => String(value),
});

builder.queryType({});
builder.mutationType({});

/** The status of the client API (the one operation the widgets' generated SDK declares). */
builder.queryField('clientApiStatus', (t) => t.string({ resolve: () => 'ok' }));
