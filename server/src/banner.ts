import type { ServerConfig } from './config.ts';
import type { FirstRun } from './runtime.ts';

/** What `npm start` prints on stdout once it listens: where, on what storage, and first-run secrets (once). */
export function banner(config: ServerConfig, url: string, firstRun: FirstRun, processes = 1): string {
  const storage = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
  const many = processes > 1 ? `, ${processes} processes` : '';
  const lines = [`Atrium is listening on ${url} (storage: ${storage}${many})`];
  if (firstRun.adminToken) {
    lines.push(
      '',
      'Admin token (shown once; the CLI reads it from ATRIUM_ADMIN_TOKEN):',
      `  export ATRIUM_ADMIN_TOKEN=${firstRun.adminToken}`,
    );
  }
  if (firstRun.environment) {
    const env = firstRun.environment;
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
    `  curl -s ${url}/organizations -H "Authorization: Bearer $WORKOS_API_KEY"`,
    `  curl -s -X POST ${url}/organizations -H "Authorization: Bearer $WORKOS_API_KEY" \\`,
    `       -H 'Content-Type: application/json' -d '{"name":"Acme","domain_data":[{"domain":"acme.com","state":"pending"}]}'`,
    `API reference: ${url}/docs   OpenAPI: ${url}/openapi.json`,
    `Operator console: ${url}/console (sign in with the admin token)`,
  );
  return `${lines.join('\n')}\n`;
}
