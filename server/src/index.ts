export { type CliIo, runCli } from './cli.ts';
export { loadConfig, type ServerConfig } from './config.ts';
export { createDeps, createLogger, type Runtime, startRuntime } from './runtime.ts';
