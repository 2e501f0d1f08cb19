export { type AppRouter, appRouter, createCaller } from './app-router.ts';
export { authenticateAdmin, authenticateApiKey, ensureAdminToken, forgetEnvironment } from './auth/service.ts';
export {
  type Config,
  type Context,
  createInnerContext,
  DEFAULT_CONFIG,
  type Deps,
  type EnvironmentInfo,
  type IdempotencyClaim,
  type Scope,
} from './context.ts';
export { createEnvironment, listEnvironments } from './environments/service.ts';
export { ApiError, contractError, type ErrorBody, type FieldError } from './errors.ts';
export {
  beginIdempotentRequest,
  completeIdempotentRequest,
  countExpiredIdempotencyKeys,
  IDEMPOTENCY_LOCK_MS,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyBegin,
  idempotentDb,
  markIdempotentWrite,
  purgeExpiredIdempotencyKeys,
  releaseIdempotentRequest,
  requestHash,
  requireIdempotencyKey,
} from './idempotency/service.ts';
export { sameDigest, sha256Hex } from './lib/random.ts';
export type { Meta } from './trpc.ts';
