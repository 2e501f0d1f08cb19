import { createCallerFactory } from '../../trpc.ts';
import { clientRouter } from '../trpc/router.ts';
import type { GraphQLContext } from './builder.ts';

// GraphQL's resolvers run the typed client procedures (`client.*`) through a caller, so the
// procedures' authentication, client scope, deadline and error mapping apply to GraphQL too.

const createClientCaller = createCallerFactory(clientRouter);
export type ClientProcedures = ReturnType<typeof createClientCaller>;

/** One caller per request, made when its first field resolves. */
const callers = new WeakMap<GraphQLContext, ClientProcedures>();

export function proceduresOf(ctx: GraphQLContext): ClientProcedures {
  let caller = callers.get(ctx);
  if (!caller) {
    caller = createClientCaller(ctx.call);
    callers.set(ctx, caller);
  }
  return caller;
}

/** The id of the verified caller's user, when the transport verified it (null for a portal session). */
export function callerUserId(ctx: GraphQLContext): string | null | undefined {
  return ctx.call.client?.principal.userId;
}
