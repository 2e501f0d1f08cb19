import { loadConfig } from './config.ts';
import { createLogger, startRuntime } from './runtime.ts';

const config = loadConfig();
const log = createLogger(config.logLevel);

const runtime = await startRuntime(config, log).catch((error: unknown) => {
  log.fatal({ err: error }, `Atrium could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

const storage = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
const lines = [`Atrium is listening on ${runtime.url} (storage: ${storage})`];
if (runtime.firstRun.adminToken) {
  lines.push(
    '',
    'Admin token (shown once; the CLI reads it from ATRIUM_ADMIN_TOKEN):',
    `  export ATRIUM_ADMIN_TOKEN=${runtime.firstRun.adminToken}`,
  );
}
if (runtime.firstRun.environment) {
  const env = runtime.firstRun.environment;
  lines.push(
    '',
    `Environment 'development' (${env.environment_id}) was created. Its API key is shown once:`,
    `  export WORKOS_API_KEY=${env.api_key}`,
    `  export WORKOS_CLIENT_ID=${env.client_id}`,
  );
}
lines.push(
  '',
  'Try it:',
  `  curl -s ${runtime.url}/organizations -H "Authorization: Bearer $WORKOS_API_KEY"`,
  `  curl -s -X POST ${runtime.url}/organizations -H "Authorization: Bearer $WORKOS_API_KEY" \\`,
  `       -H 'Content-Type: application/json' -d '{"name":"Acme","domain_data":[{"domain":"acme.com","state":"pending"}]}'`,
  `API reference: ${runtime.url}/docs   OpenAPI: ${runtime.url}/openapi.json`,
);
process.stdout.write(`${lines.join('\n')}\n`);

let closing = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), config.shutdownDrainMs + 5_000);
    force.unref();
    runtime.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
