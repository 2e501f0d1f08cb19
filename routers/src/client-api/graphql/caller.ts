import type { Context } from '../../kernel/context.ts';
import { unauthorized } from '../../kernel/errors.ts';
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
    caller = createClientCaller(callOf(ctx));
    callers.set(ctx, caller);
  }
  return caller;
}

/** The request's call context; from a scope, the verified caller it holds. */
function callOf(ctx: GraphQLContext): Context {
  if (ctx.call) return ctx.call;
  const scope = ctx.scope;
  if (!scope) throw unauthorized('A client or widget token is required.');
  const client = { env: scope.env, principal: scope.client };
  return { deps: scope.deps, authorization: undefined, client, responseHeaders: {} };
}

/** The id of the verified caller's user, when the transport verified it (null for a portal session). */
export function callerUserId(ctx: GraphQLContext): string | null | undefined {
  return callOf(ctx).client?.principal.userId;
}
