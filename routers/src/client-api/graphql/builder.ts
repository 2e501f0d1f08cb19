import SchemaBuilder from '@pothos/core';
import type { Context } from '../../kernel/context.ts';

/** What every resolver of `/client/graphql` gets: the request's call context (one per request). */
export interface GraphQLContext {
  /** The call context (kernel/context.ts), its `client` verified by the pipeline once per request. */
  call: Context;
}

export interface SchemaTypes {
  Context: GraphQLContext;
  Scalars: { DateTime: { Input: string; Output: string } };
  DefaultFieldNullability: false;
}

/**
 * A code-first builder of the client GraphQL schema, with the `DateTime` scalar (an ISO-8601 UTC
 * string, as the widgets' client types declare) and the root types. schema.ts makes one and hands
 * it to each area's types in turn.
 */
export function newBuilder() {
  const builder = new SchemaBuilder<SchemaTypes>({ defaultFieldNullability: false });
  builder.scalarType('DateTime', {
    description: 'An ISO-8601 UTC timestamp.',
    serialize: (value) => value,
    parseValue: (value) => String(value),
  });
  builder.queryType({});
  builder.mutationType({});
  return builder;
}

export type ClientBuilder = ReturnType<typeof newBuilder>;
