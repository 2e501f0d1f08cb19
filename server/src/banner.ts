import type { ServerConfig } from './config.ts';
import type { FirstRun } from './runtime.ts';

/**
 * What `npm start` prints on stdout once it listens: where it listens (the real port), its public
 * URL when ATRIUM_PUBLIC_URL names another, the two `export` lines the admin CLI reads, and the
 * first-run secrets (once). Commands use the public URL: that is where clients reach the server.
 */
export function banner(
  config: Pick<ServerConfig, 'databaseUrl' | 'dataDir' | 'publicUrl' | 'publicUrlConfigured' | 'adminToken'>,
  url: string,
  firstRun: FirstRun,
  processes = 1,
): string {
  const storage = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
  const many = processes > 1 ? `, ${processes} processes` : '';
  const lines = [`Atrium is listening on ${url} (storage: ${storage}${many})`];
  const base = config.publicUrlConfigured ? config.publicUrl.replace(/\/+$/, '') : url;
  if (base !== url) lines.push(`Public URL (ATRIUM_PUBLIC_URL): ${base}`);

  lines.push(
    '',
    'The admin CLI (npx atrium --help) reads ATRIUM_URL and ATRIUM_ADMIN_TOKEN:',
    `  export ATRIUM_URL=${base}`,
  );
  if (firstRun.adminToken) {
    lines.push(
      `  export ATRIUM_ADMIN_TOKEN=${firstRun.adminToken}`,
      '  (the admin token is shown once; it also signs in to the console)',
    );
  } else if (config.adminToken) {
    lines.push('  (for ATRIUM_ADMIN_TOKEN, the value this server was started with)');
  } else {
    lines.push('  (for ATRIUM_ADMIN_TOKEN, the admin token the first start printed)');
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
    `  curl -s ${base}/organizations -H "Authorization: Bearer $WORKOS_API_KEY"`,
    `  curl -s -X POST ${base}/organizations -H "Authorization: Bearer $WORKOS_API_KEY" \\`,
    `       -H 'Content-Type: application/json' -d '{"name":"Acme","domain_data":[{"domain":"acme.com","state":"pending"}]}'`,
    `API reference: ${base}/docs   OpenAPI: ${base}/openapi.json`,
    `Operator console: ${base}/console (sign in with the admin token)`,
  );
  return `${lines.join('\n')}\n`;
}
