import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { authenticateAdmin, authenticateApiKey } from './auth/service.ts';
import { type Context, DEFAULT_CONFIG, type Scope } from './context.ts';
import { ApiError, contractError, forbidden, fromDatabaseError, invalid, serviceUnavailable } from './errors.ts';
import { idempotentDb } from './idempotency/service.ts';

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
 * Turns what is not yet the contract's error (a zod input failure, a database constraint or
 * connection error) into an ApiError, so every transport sees the same status and body.
 */
const contractErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (result.ok || result.error instanceof ApiError) return result;
  const { error } = result;
  if (error.cause instanceof ApiError) throw error.cause;
  const fromDb = fromDatabaseError(error.cause);
  if (fromDb) throw fromDb;
  if (error.code === 'BAD_REQUEST' && error.cause && 'issues' in error.cause) {
    const rendered = contractError(error);
    throw invalid(rendered.body.errors ?? []);
  }
  return result;
});

/**
 * Every procedure answers within `config.requestTimeoutMs`: past it, 503 service_unavailable
 * (the outcome of a write cut off this way is unknown to the caller, as with any 503).
 */
const deadline = t.middleware(async ({ ctx, next }) => {
  const ms = ctx.deps.config.requestTimeoutMs ?? DEFAULT_CONFIG.requestTimeoutMs;
  if (!ms) return next();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(serviceUnavailable()), ms);
  });
  try {
    return await Promise.race([next(), expired]);
  } finally {
    clearTimeout(timer);
  }
});

export const publicProcedure = t.procedure.use(contractErrors).use(deadline);

/** Authenticated by an environment's API key; services get a Scope for that environment. */
export const apiProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const env = await authenticateApiKey(ctx.deps, ctx.authorization);
  const db = ctx.idempotency ? idempotentDb(ctx.deps.db, ctx.idempotency) : ctx.deps.db;
  const scope: Scope = { db, env, now: ctx.deps.now, deps: ctx.deps };
  return next({ ctx: { ...ctx, scope } });
});

/** An API procedure that also needs a feature flag of the environment. */
export const featureProcedure = (flag: string) =>
  apiProcedure.use(({ ctx, next }) => {
    if (!ctx.scope.env.flags[flag]) {
      throw forbidden('feature_not_enabled', `The '${flag}' feature is not enabled for this environment.`);
    }
    return next();
  });

/** The admin surface (not on the REST facade): authenticated by an admin token. */
export const adminProcedure = publicProcedure.use(async ({ ctx, next }) => {
  await authenticateAdmin(ctx.deps, ctx.authorization);
  return next();
});
