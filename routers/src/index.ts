export { type AppRouter, appRouter, createCaller } from './app-router.ts';
export { ensureAdminToken, forgetEnvironment } from './auth/service.ts';
export {
  type Config,
  type Context,
  createInnerContext,
  DEFAULT_CONFIG,
  DEFAULT_TOKEN_SETTINGS,
  type Deps,
  type EnvironmentInfo,
  newCaches,
  type Scope,
  type TokenConfig,
} from './context.ts';
export { createEnvironment, listEnvironments } from './environments/service.ts';
export { ApiError, contractError, type ErrorBody, type FieldError } from './errors.ts';
export { parseMasterKey } from './signing/material.ts';
export { jwksOfClient, rotateSigningKey, signToken, verifyToken } from './signing/service.ts';
export type { Meta } from './trpc.ts';
