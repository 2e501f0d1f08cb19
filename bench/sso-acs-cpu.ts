/**
 * `npx tsx bench/sso-acs-cpu.ts --posts 200 --warmup 40`: the CPU of one ACS POST, whole (HTTP,
 * verification of a response and assertion both signed, the sign-in of a new person), sent one
 * at a time from this process to the server in it, on `DATABASE_URL` (else PGlite in memory).
 * Prints the process's CPU per POST (the client's fetch included: the same for any build, so
 * two builds' difference holds) and PostgreSQL's transactions per POST. One at a time, so no POST
 * is in flight when the count stops, as it is in bench/sso.ts's autocannon run. Two builds of it
 * side by side compare the ACS of two commits (bench/README.md, "SSO", h2-acs).
 */
import { parseArgs } from 'node:util';
import { configureSamlConnection } from '@atrium/routers';
import { readAuthnRequest, startDevIdp } from '@atrium/server';
import { sql } from 'drizzle-orm';
import { CALLBACK, ssoBenchWorld } from './sso-world.ts';

const { values: args } = parseArgs({
  options: {
    posts: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '40' },
    port: { type: 'string', default: '0' },
  },
});
const { handle, deps, server, base, env, scope, domain, made } = await ssoBenchWorld(
  'bench-acs-cpu',
  Number(args.port),
);
const idp = await startDevIdp();
await configureSamlConnection(scope, made.id, { idp_metadata_xml: idp.metadataXml });
const sp = { entityId: `${base}/sso/saml/${made.id}`, acsUrl: `${base}/sso/saml/acs/${made.id}` };

/** A fresh authorization (GET /sso/authorize) and the IdP's signed answer to it, as the ACS form. */
async function prepare(i: number): Promise<string> {
  const query = new URLSearchParams({ client_id: env.client_id, connection: made.id, redirect_uri: CALLBACK });
  const res = await fetch(`${base}/sso/authorize?${query}`, { redirect: 'manual' });
  const location = new URL(res.headers.get('location') ?? '');
  const request = readAuthnRequest(location.searchParams.get('SAMLRequest') ?? '');
  const xml = await idp.loginResponse(
    sp,
    { email: `acs${i}@${domain}`, firstName: 'Bench', lastName: `${i}` },
    request.id,
  );
  return new URLSearchParams({
    SAMLResponse: Buffer.from(xml).toString('base64'),
    RelayState: location.searchParams.get('RelayState') ?? '',
  }).toString();
}

async function post(body: string): Promise<void> {
  const res = await fetch(`${base}/sso/saml/acs/${made.id}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body,
    redirect: 'manual',
  });
  await res.arrayBuffer();
  if (res.status !== 302 || !res.headers.get('location')?.includes('code=')) {
    throw new Error(`ACS POST: ${res.status} ${res.headers.get('location')}`);
  }
}

const transactions = async () => {
  if (deps.driver !== 'postgres') return 0;
  await new Promise((resolve) => setTimeout(resolve, 1_100)); // pg_stat_database's flush
  await deps.db.execute(sql`select pg_stat_clear_snapshot()`);
  const [row] = (await deps.db.execute(
    sql`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`,
  )) as unknown as Array<{ n: string }>;
  return Number(row?.n ?? 0);
};

const warmup = Number(args.warmup);
const count = Number(args.posts);
const bodies: string[] = [];
for (let i = 0; i < warmup + count; i += 1) bodies.push(await prepare(i));
for (const body of bodies.slice(0, warmup)) await post(body);
const xactFrom = await transactions();
const cpuFrom = process.cpuUsage();
const wallFrom = performance.now();
for (const body of bodies.slice(warmup)) await post(body);
const cpu = process.cpuUsage(cpuFrom);
const wall = performance.now() - wallFrom;
// Less the two statements of the readings themselves.
const xacts =
  deps.driver === 'postgres' ? (((await transactions()) - xactFrom - 2) / count).toFixed(2) : 'n/a (PGlite)';
process.stdout.write(
  `ACS POSTs ${count}: ${((cpu.user + cpu.system) / 1000 / count).toFixed(2)} ms CPU and ${(wall / count).toFixed(2)} ms wall per POST; PostgreSQL transactions per POST ${xacts}\n`,
);
await idp.close();
server.close();
await handle.close();
process.exit(0);
