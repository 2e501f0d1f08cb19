import type { ReadReplica } from '@atrium/db';
import { initTRPC, type TRPCError } from '@trpc/server';
import { authenticateAdmin } from './auth/admin-token.ts';
import { authenticateApiKey, callerKeyOf } from './auth/api-key.ts';
import { authenticateClientToken } from './auth/client-token.ts';
import { authenticateConsole } from './auth/console-session.ts';
import { authenticateDirectoryToken } from './auth/directory-token.ts';
import { idempotencyStep } from './idempotency/middleware.ts';
import type { Context } from './kernel/context.ts';
import { forbidden, isDatabaseUnreachable } from './kernel/errors.ts';
import type { ClientScope, DirectoryScope } from './kernel/principals.ts';
import type { Scope } from './kernel/scope.ts';
import { middlewareResult } from './trpc-adapter.ts';
import { apiErrorOf, asTRPCError, trpcContractError } from './trpc-errors.ts';
import type { Meta } from './trpc-meta.ts';

export type { Meta } from './trpc-meta.ts';

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    errorFormatter({ shape, error }) {
      // Never ship a stack; carry the contract's body for every client.
      const { stack: _stack, ...data } = shape.data;
      return { ...shape, data: { ...data, contract: trpcContractError(error) } };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * The one middleware step of every procedure (built below per surface): the caller's
 * authentication, and the mapping of every error onto tRPC (`asTRPCError`), so each transport
 * renders the same status and body. One level, not three: tRPC copies the call's options and
 * context at every middleware level. The request deadline (`config.requestTimeoutMs`) is the
 * facade pipeline's step, one for every transport (rest-facade/src/pipeline/pipeline.ts).
 */
async function guarded<R extends { ok: true } | { ok: false; error: TRPCError }>(run: () => Promise<R>): Promise<R> {
  let result: R;
  try {
    result = await run();
  } catch (error) {
    throw asTRPCError(error);
  }
  if (result.ok || !apiErrorOf(result.error)) return result;
  throw asTRPCError(result.error);
}

export const publicProcedure = t.procedure.use(({ next }) => guarded(() => next()));

/** The caller's environment from its API key, and the Scope services work in. */
async function scopeOfApiKey(ctx: Context, flag?: string): Promise<Scope> {
  const env = ctx.environment ?? (await authenticateApiKey(ctx.deps, ctx.authorization));
  if (flag !== undefined && !env.flags[flag]) {
    throw forbidden('feature_not_enabled', `The '${flag}' feature is not enabled for this environment.`);
  }
  return { db: ctx.deps.db, env, now: ctx.deps.now, deps: ctx.deps };
}

/**
 * With a read replica (`deps.replica`), where an API-key call reads and writes. A query runs on
 * the handle `readerFor` names for the caller's key: the replica, unless it is down, lagging, or
 * has not replayed this key's last write (read-your-writes); a query that fails there because
 * the replica cannot answer, or has no answer within `readTimeoutMs` (a replica that hangs
 * without an error), runs once more on the primary. Anything else (mutations, and every
 * transaction wherever it starts) runs on the primary, and then the key's position is recorded.
 * The key is the SHA-256 of the API key, as in the key cache.
 */
async function routedReads<R extends { ok: boolean; error?: TRPCError }>(
  replica: ReadReplica,
  type: string,
  authorization: string | undefined,
  scope: Scope,
  run: (scope: Scope) => Promise<R>,
): Promise<R> {
  const key = callerKeyOf(authorization);
  if (type !== 'query') {
    try {
      return await run(scope);
    } finally {
      await replica.wrote(key);
    }
  }
  const db = replica.readerFor(key);
  if (db === scope.db) return run(scope);
  const attempt = run({ ...scope, db });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), replica.readTimeoutMs);
  });
  let result: R | 'late';
  try {
    result = await Promise.race([attempt, late]);
  } catch (error) {
    if (!isDatabaseUnreachable(error)) throw error;
    replica.failed('a read could not reach the replica');
    return run(scope);
  } finally {
    clearTimeout(timer);
  }
  if (result === 'late') {
    // A query only reads, so the primary may run it too; the replica's answer, if any, is dropped.
    attempt.catch(() => {});
    replica.failed('a read did not answer in time');
    return run(scope);
  }
  if (result.ok || !isDatabaseUnreachable(result.error)) return result;
  replica.failed('a read could not reach the replica');
  return run(scope);
}

/** How the idempotency step (idempotency/middleware.ts) makes a tRPC result of a replay and reads a failure. */
const IDEMPOTENCY_CODEC = { replayed: middlewareResult, contractOf: trpcContractError };

/** The caller's Scope, then the call, through the idempotency step (idempotency/middleware.ts). */
const apiGuard = (flag?: string) =>
  t.middleware((opts) =>
    guarded(async () => {
      const scope = await scopeOfApiKey(opts.ctx, flag);
      const run = (called: Scope) =>
        idempotencyStep(opts, called, (s) => opts.next({ ctx: { scope: s } }), IDEMPOTENCY_CODEC);
      const replica = opts.ctx.deps.replica;
      return replica ? routedReads(replica, opts.type, opts.ctx.authorization, scope, run) : run(scope);
    }),
  );

/** Authenticated by an environment's API key; services get a Scope for that environment. */
export const apiProcedure = t.procedure.use(apiGuard());

/** An API procedure that also needs a feature flag of the environment. */
export const featureProcedure = (flag: string) => t.procedure.use(apiGuard(flag));

/**
 * The admin surface (not on the REST facade): authenticated by an admin token, or by the
 * operator console's session cookie with its CSRF token.
 */
export const adminProcedure = t.procedure.use(({ ctx, next }) =>
  guarded(async () => {
    // The pipeline's authenticate step has looked the admin token or the console session up
    // already (when it counts it); a console call's CSRF token is checked here all the same.
    const adminTokenId =
      ctx.adminTokenId ??
      (ctx.console
        ? await authenticateConsole(ctx.deps, ctx.console, ctx.consoleSession)
        : await authenticateAdmin(ctx.deps, ctx.authorization));
    return next({ ctx: { adminTokenId } });
  }),
);

/**
 * The client surfaces (`/_widgets/…`, `/client/graphql`, `/trpc/client.*`): authenticated by a
 * client or widget token (never an API key), confined to its organization and user. Services get
 * a ClientScope; every refusal of the credential is 403.
 */
export const clientProcedure = t.procedure.use(({ ctx, next }) =>
  guarded(async () => {
    if (ctx.clientRefusal) throw ctx.clientRefusal;
    const { env, principal } = ctx.client ?? (await authenticateClientToken(ctx.deps, ctx.authorization, ctx.device));
    const scope: ClientScope = { db: ctx.deps.db, env, now: ctx.deps.now, deps: ctx.deps, client: principal };
    return next({ ctx: { scope } });
  }),
);

/**
 * The SCIM surface (`/scim/v2/<directory_id>/…`, rest-facade's SCIM codec): authenticated by a
 * directory's SCIM token (never an API key), confined to that directory. Services get a
 * DirectoryScope; every refusal of the credential is 401.
 */
export const scimProcedure = t.procedure.use(({ ctx, next }) =>
  guarded(async () => {
    const { env, principal } = ctx.directory ?? (await authenticateDirectoryToken(ctx.deps, ctx.authorization));
    const scope: DirectoryScope = { db: ctx.deps.db, env, now: ctx.deps.now, deps: ctx.deps, directory: principal };
    return next({ ctx: { scope } });
  }),
);
