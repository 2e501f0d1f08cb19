export { type AppOptions, type AtriumApp, createApp } from './app.ts';
export { buildOpenApiDocument } from './openapi.ts';
