export { type AppOptions, type AtriumApp, createApp } from './app.ts';
export { Metrics } from './metrics.ts';
export { buildOpenApiDocument } from './openapi.ts';
export { addressKey } from './pipeline/authenticate.ts';
export { BODY_TIMEOUT_MS, MAX_BODY_BYTES, parseQuery, readJsonBody } from './pipeline/body.ts';
export {
  clientAddressOf,
  normalizeAddress,
  type ProxyPredicate,
  parseTrustedProxies,
  trustedProxies,
} from './pipeline/client-address.ts';
export { type Deadlined, Deadlines } from './pipeline/deadline.ts';
export {
  GRAPHQL_LIMITS,
  type GraphQLOptions,
  graphqlCodeOf,
  graphqlHardening,
  type YogaContext,
} from './pipeline/graphql.ts';
export {
  type Admitted,
  DEFAULT_IN_FLIGHT,
  InFlightLimit,
  type InFlightOptions,
  type Turn,
  weightOfPage,
} from './pipeline/in-flight.ts';
export { DEFAULT_RATE_LIMITS, type RateLimitOptions, RateLimits } from './pipeline/rate-limit.ts';
export { MAX_BATCH_CALLS, MAX_RESPONSE_BYTES } from './pipeline/render.ts';
export { type RestRoute, type RouteMatch, RouteTable } from './pipeline/routes.ts';
export { API_SECURITY_HEADERS, applyHeaders } from './security.ts';
