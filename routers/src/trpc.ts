import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { authenticateAdmin, authenticateApiKey } from './auth/service.ts';
import { type Context, DEFAULT_CONFIG, type Scope } from './context.ts';
import {
  ApiError,
  contractError,
  forbidden,
  fromDatabaseError,
  invalid,
  malformedInput,
  serviceUnavailable,
} from './errors.ts';
import { idempotencyStep } from './idempotency/middleware.ts';

export type Meta = OpenApiMeta<{
  /** The HTTP status of a success on the REST surface (default 200). */
  successStatus?: 200 | 201 | 204;
}>;

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    errorFormatter({ shape, error }) {
      // Never ship a stack; carry the contract's body for every client.
      const { stack: _stack, ...data } = shape.data;
      return { ...shape, data: { ...data, contract: contractError(error) } };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const middleware = t.middleware;

/**
 * What is not yet the contract's error (a zod input failure, a database constraint or
 * connection error) as an ApiError, so every transport sees the same status and body; undefined
 * when the error stays as it is.
 */
function asContractError(error: TRPCError): ApiError | undefined {
  if (error instanceof ApiError) return undefined;
  if (error.cause instanceof ApiError) return error.cause;
  const fromDb = fromDatabaseError(error.cause);
  if (fromDb) return fromDb;
  if (error.code === 'BAD_REQUEST' && error.cause && 'issues' in error.cause) {
    return invalid(contractError(error).body.errors ?? []);
  }
  return malformedInput(error);
}

/** The caller's authentication, failing as the contract renders it (a lost database is a 503). */
async function authenticated<T>(authenticate: () => Promise<T>): Promise<T> {
  try {
    return await authenticate();
  } catch (cause) {
    throw cause instanceof TRPCError ? cause : (fromDatabaseError(cause) ?? cause);
  }
}

/**
 * The one middleware step of every procedure (built below per surface): contract errors, the
 * deadline and the caller's authentication together. Each tRPC middleware level copies the
 * call's options and context; three levels cost ~3 % of a small REST request (profiled).
 *
 * Every procedure answers within `config.requestTimeoutMs`: past it, 503 service_unavailable
 * (the outcome of a write cut off this way is unknown to the caller, as with any 503).
 */
async function guarded<R extends { ok: true } | { ok: false; error: TRPCError }>(
  ctx: Context,
  run: () => Promise<R>,
): Promise<R> {
  const ms = ctx.deps.config.requestTimeoutMs ?? DEFAULT_CONFIG.requestTimeoutMs;
  let result: R;
  if (!ms) result = await run();
  else {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(serviceUnavailable()), ms);
    });
    try {
      result = await Promise.race([run(), expired]);
    } finally {
      clearTimeout(timer);
    }
  }
  if (result.ok) return result;
  const mapped = asContractError(result.error);
  if (mapped) throw mapped;
  return result;
}

export const publicProcedure = t.procedure.use(({ ctx, next }) => guarded(ctx, () => next()));

/** The caller's environment from its API key, and the Scope services work in. */
async function scopeOfApiKey(ctx: Context, flag?: string): Promise<Scope> {
  const env = ctx.environment ?? (await authenticateApiKey(ctx.deps, ctx.authorization));
  if (flag !== undefined && !env.flags[flag]) {
    throw forbidden('feature_not_enabled', `The '${flag}' feature is not enabled for this environment.`);
  }
  return { db: ctx.deps.db, env, now: ctx.deps.now, deps: ctx.deps };
}

/** The caller's Scope, then the call, through the idempotency step (idempotency/middleware.ts). */
const apiGuard = (flag?: string) =>
  t.middleware((opts) =>
    guarded(opts.ctx, async () => {
      const scope = await authenticated(() => scopeOfApiKey(opts.ctx, flag));
      return idempotencyStep(opts, scope, (called) => opts.next({ ctx: { scope: called } }));
    }),
  );

/** Authenticated by an environment's API key; services get a Scope for that environment. */
export const apiProcedure = t.procedure.use(apiGuard());

/** An API procedure that also needs a feature flag of the environment. */
export const featureProcedure = (flag: string) => t.procedure.use(apiGuard(flag));

/** The admin surface (not on the REST facade): authenticated by an admin token. */
export const adminProcedure = t.procedure.use(({ ctx, next }) =>
  guarded(ctx, async () => {
    const adminTokenId = await authenticated(() => authenticateAdmin(ctx.deps, ctx.authorization));
    return next({ ctx: { adminTokenId } });
  }),
);
