export { type AppOptions, type AtriumApp, createApp } from './app.ts';
export { DEFAULT_IN_FLIGHT, InFlightLimit, type InFlightOptions, weightOfPage } from './in-flight.ts';
export { Metrics } from './metrics.ts';
export { buildOpenApiDocument } from './openapi.ts';
export { DEFAULT_RATE_LIMITS, type RateLimitOptions, RateLimits } from './rate-limit.ts';
export { MAX_BATCH_CALLS, MAX_RESPONSE_BYTES } from './response-limit.ts';
