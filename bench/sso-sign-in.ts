/**
 * `npx tsx bench/sso-sign-in.ts --sign-ins 400`: the CPU of one SSO sign-in alone (`completeSignIn`:
 * the transaction that provisions a new person, membership, profile, code and events), without
 * the SAML verification or HTTP, one at a time on `DATABASE_URL` (else PGlite in memory). Prints
 * the process's CPU per sign-in and PostgreSQL's transactions per sign-in. Run from two checkouts
 * in turn to compare them under the same neighbours (bench/README.md, "SSO", h2-sso).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { openDb } from '@atrium/db';
import { createApp } from '@atrium/rest-facade';
import {
  completeSignIn,
  createConnection,
  createEnvironment,
  DEFAULT_TOKEN_SETTINGS,
  type Deps,
  loadSsoConnection,
  newCaches,
  scopeOf,
} from '@atrium/routers';
import { sql } from 'drizzle-orm';
import pino from 'pino';

const { values: args } = parseArgs({
  options: { 'sign-ins': { type: 'string', default: '400' }, warmup: { type: 'string', default: '100' } },
});
const handle = await openDb(
  process.env.DATABASE_URL ? { databaseUrl: process.env.DATABASE_URL, poolSize: 10 } : { dataDir: 'memory://' },
);
await handle.migrate();
const deps: Deps = {
  db: handle.db,
  driver: handle.driver,
  now: () => new Date(),
  log: pino({ level: 'warn' }),
  config: { apiKeyCacheTtlMs: 2_000, webhooksAllowPrivate: true },
  tokens: Object.assign({}, DEFAULT_TOKEN_SETTINGS, { masterKey: randomBytes(32), issuer: 'http://127.0.0.1' }),
  caches: newCaches(),
};
const server = createServer(createApp(deps, { baseUrl: 'http://127.0.0.1', rateLimit: false }).handler);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const env = await createEnvironment(deps, { name: `bench-sign-in-${Date.now()}` });
const scope = await scopeOf(deps, env.environment_id);
const api = async (path: string, body: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${env.api_key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<{ id: string }>;
};
const domain = `bench-${Date.now().toString(36)}.com`;
const organization = await api('/organizations', { name: 'Bench SSO', domain_data: [{ domain, state: 'verified' }] });
const made = await createConnection(scope, {
  organization_id: organization.id,
  connection_type: 'GenericSAML',
  name: 'Bench IdP',
  state: 'active',
} as Parameters<typeof createConnection>[1]);
await api('/user_management/redirect_uris', { uri: 'https://app.example.com/callback', default: true });
const connection = await loadSsoConnection(deps.db, scope.env.id, made.id);

let person = 0;
const signIn = () => {
  const email = `p${person++}@${domain}`;
  return completeSignIn(scope, connection, null, { idpId: email, email, customAttributes: {}, rawAttributes: {} });
};
const transactions = async () => {
  if (deps.driver !== 'postgres') return 0;
  const [row] = (await deps.db.execute(
    sql`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`,
  )) as unknown as Array<{ n: string }>;
  return Number(row?.n ?? 0);
};

for (let i = 0; i < Number(args.warmup); i += 1) await signIn();
const count = Number(args['sign-ins']);
const xactFrom = await transactions();
const cpuFrom = process.cpuUsage();
const wallFrom = performance.now();
for (let i = 0; i < count; i += 1) await signIn();
const cpu = process.cpuUsage(cpuFrom);
const wall = performance.now() - wallFrom;
// pg_stat_database lags by up to its flush interval: wait for it before reading.
await new Promise((resolve) => setTimeout(resolve, 1_100));
const xacts = ((await transactions()) - xactFrom - 1) / count;
process.stdout.write(
  `sign-ins ${count}: ${((cpu.user + cpu.system) / 1000 / count).toFixed(2)} ms CPU and ${(wall / count).toFixed(2)} ms wall per sign-in; PostgreSQL transactions per sign-in ${xacts.toFixed(2)}\n`,
);
server.close();
await handle.close();
process.exit(0);
