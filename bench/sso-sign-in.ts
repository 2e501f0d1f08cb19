/**
 * `npx tsx bench/sso-sign-in.ts --sign-ins 400`: the CPU of one SSO sign-in alone (`completeSignIn`:
 * the transaction that provisions a new person, membership, profile, code and events), without
 * the SAML verification or HTTP, one at a time on `DATABASE_URL` (else PGlite in memory). Prints
 * the process's CPU per sign-in and PostgreSQL's transactions per sign-in. Run from two checkouts
 * in turn to compare them under the same neighbours (bench/README.md, "SSO", h2-sso).
 */
import { parseArgs } from 'node:util';
import { completeSignIn, loadConnection } from '@atrium/routers';
import { sql } from 'drizzle-orm';
import { ssoBenchWorld } from './sso-world.ts';

const { values: args } = parseArgs({
  options: { 'sign-ins': { type: 'string', default: '400' }, warmup: { type: 'string', default: '100' } },
});
const { handle, deps, server, scope, domain, made } = await ssoBenchWorld('bench-sign-in');
const connection = await loadConnection(deps.db, scope.env.id, made.id);

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
// PGlite keeps no pg_stat_database: the count is PostgreSQL's only.
const xacts =
  deps.driver === 'postgres' ? (((await transactions()) - xactFrom - 1) / count).toFixed(2) : 'n/a (PGlite)';
process.stdout.write(
  `sign-ins ${count}: ${((cpu.user + cpu.system) / 1000 / count).toFixed(2)} ms CPU and ${(wall / count).toFixed(2)} ms wall per sign-in; PostgreSQL transactions per sign-in ${xacts}\n`,
);
server.close();
await handle.close();
process.exit(0);
