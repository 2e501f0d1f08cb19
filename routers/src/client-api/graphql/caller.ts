import type { createCallerFactory } from '../../trpc.ts';
import { callProcedure, procedureEntries } from '../../trpc-adapter.ts';
import { clientRouter } from '../trpc/router.ts';
import type { GraphQLContext } from './builder.ts';

// GraphQL's resolvers run the typed client procedures (`client.*`) through their middleware and
// parsers, so the procedures' authentication, client scope and error mapping apply to GraphQL
// too (the deadline is the pipeline's, one for every transport).

/** tRPC's caller of the client router: its shape and types, not used at run time. */
type Caller = ReturnType<ReturnType<typeof createCallerFactory<(typeof clientRouter)['_def']['record']>>>;

/** The caller's shape with the request's context as each procedure's first argument. */
type Table<T> = {
  [K in keyof T]: T[K] extends (input: infer I, ...rest: never[]) => Promise<infer O>
    ? (ctx: GraphQLContext, input: I) => Promise<O>
    : Table<T[K]>;
};
export type ClientProcedures = Table<Caller>;

/**
 * The client procedures by path, made once per process: a call runs the procedure as tRPC's
 * caller does (`callProcedure`), without a caller's recursive proxy per request and per property
 * read (bench/README.md, "GraphQL's procedures from a per-process table").
 */
function tableOf(): ClientProcedures {
  const table: Record<string, unknown> = {};
  for (const entry of procedureEntries(clientRouter)) {
    const names = entry.path.split('.');
    let node = table;
    for (const name of names.slice(0, -1)) {
      node[name] ??= {};
      node = node[name] as Record<string, unknown>;
    }
    node[names[names.length - 1] as string] = (ctx: GraphQLContext, input: unknown) =>
      callProcedure(entry, ctx.call, input);
  }
  return table as ClientProcedures;
}

export const procedures: ClientProcedures = tableOf();

/** The id of the verified caller's user, when the transport verified it (null for a portal session). */
export function callerUserId(ctx: GraphQLContext): string | null | undefined {
  return ctx.call.client?.principal.userId;
}
