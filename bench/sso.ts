/**
 * SSO (issue #37) on one process: `npm run bench:sso` (bench/README.md, "SSO").
 *
 * - `sso_saml_acs`: POSTs of freshly signed SAML responses (response and assertion signed by the
 *   loopback IdP, each answering its own authorization) to the ACS, signature verification and
 *   the whole sign-in included (replay cache, JIT user, profile, code). The responses are made
 *   before the measured run; autocannon drives them from its own process (bench/load.ts). Also
 *   reports the CPU one verification costs (`consumeSamlResponse` alone, in a loop).
 * - `sso_token`: `POST /sso/token` spending one-use codes minted beforehand.
 *
 * The server runs in this process on PGlite (in memory), or on `DATABASE_URL` when set.
 * Targets: >= 200 ACS POSTs/s and >= 1,000 token exchanges/s on one process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { ssoCodes } from '@atrium/db';
import {
  completeSignIn,
  configureSamlConnection,
  consumeSamlResponse,
  loadConnection,
  startSaml,
} from '@atrium/routers';
import { readAuthnRequest, startDevIdp } from '@atrium/server';
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import { eq, sql } from 'drizzle-orm';
import type { LoadResult, LoadSpec } from './load.ts';
import { CALLBACK, ssoBenchWorld } from './sso-world.ts';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '8' },
    connections: { type: 'string', default: '8' },
    responses: { type: 'string', default: '2500' },
    codes: { type: 'string', default: '6000' },
    verifications: { type: 'string', default: '200' },
    /** `acs` or `token`: run that scenario alone (both by default). */
    only: { type: 'string' },
    /** The server's port (0: the system picks one), for a machine that hands out port ranges. */
    port: { type: 'string', default: '0' },
    /** Leave out the ACS floor (bench/floors/acs.ts), which otherwise runs right after Atrium's ACS run. */
    'skip-floors': { type: 'boolean', default: false },
  },
});
const seconds = Number(args.seconds);
const log = (line: string) => process.stdout.write(`${line}\n`);

const { handle, deps, server, base, env, scope, domain, made } = await ssoBenchWorld('bench-sso', Number(args.port));
const idp = await startDevIdp();
await configureSamlConnection(scope, made.id, { idp_metadata_xml: idp.metadataXml });
const sp = { entityId: `${base}/sso/saml/${made.id}`, acsUrl: `${base}/sso/saml/acs/${made.id}` };

/** Runs bench/load.ts (autocannon) in its own process on `spec`; returns its result. */
async function drive(spec: LoadSpec): Promise<LoadResult> {
  const file = join(mkdtempSync(join(tmpdir(), 'atrium-bench-sso-')), 'spec.json');
  writeFileSync(file, JSON.stringify(spec));
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/load.ts', file], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
  });
  await new Promise((resolve) => child.on('exit', resolve));
  const line = out.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as LoadResult;
}

const cpuMs = (from: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};

/** The bench database's name on PostgreSQL (undefined on PGlite, whose CPU is the process's). */
const pgDatabase =
  deps.driver === 'postgres'
    ? ((await deps.db.execute(sql`select current_database() as name`)) as unknown as Array<{ name: string }>)[0]?.name
    : undefined;

/**
 * CPU ticks (1/100 s) of the PostgreSQL processes serving the bench, by pid: the backends of its
 * database and the server's own processes (WAL writer, ...), as bench/run.ts's `postgresTicks`;
 * other sessions' databases on the same server do not count.
 */
function pgTicks(): Map<number, number> {
  const ticks = new Map<number, number>();
  if (!pgDatabase) return ticks;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (/\(\d+\)|\[local\]/.test(title) && !title.includes(` ${pgDatabase} `)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {}
  }
  return ticks;
}

/** Committed and rolled-back transactions of the bench database (PostgreSQL's statistics). */
async function pgTransactions(): Promise<number> {
  if (!pgDatabase) return 0;
  // The statistics are flushed by each backend at most once a second.
  await new Promise((resolve) => setTimeout(resolve, 1_200));
  await deps.db.execute(sql`select pg_stat_clear_snapshot()`);
  const [row] = (await deps.db.execute(
    sql`select (xact_commit + xact_rollback)::int as n from pg_stat_database where datname = current_database()`,
  )) as unknown as Array<{ n: number }>;
  return row?.n ?? 0;
}

/** Server and PostgreSQL CPU per request (µs) and PostgreSQL transactions per request, since `from`. */
async function perRequest(
  from: { cpu: NodeJS.CpuUsage; pg: Map<number, number>; xacts: number },
  requests: number,
): Promise<string> {
  const serverUs = (cpuMs(from.cpu) * 1000) / Math.max(1, requests);
  let pgSpent = 0;
  for (const [pid, t] of pgTicks()) pgSpent += t - (from.pg.get(pid) ?? 0);
  if (!pgDatabase) return `CPU µs/req server ${serverUs.toFixed(0)} (PGlite: the database is in it)`;
  const pgUs = (pgSpent * 10_000) / Math.max(1, requests);
  // Counted after the measured run; about two transactions are the first reading's own, less them.
  const xacts = ((await pgTransactions()) - from.xacts - 2) / Math.max(1, requests);
  return `CPU µs/req server ${serverUs.toFixed(0)} pg ${pgUs.toFixed(0)}, pg transactions/req ${xacts.toFixed(2)}`;
}

async function measureFrom() {
  const xacts = await pgTransactions();
  return { cpu: process.cpuUsage(), pg: pgTicks(), xacts };
}

/**
 * `count` sign-ins of new people (`<who><i>@domain`), each its own `GET /sso/authorize` answered
 * by the loopback IdP with a fresh response (response and assertion signed): the ACS form bodies.
 */
async function prepareResponses(count: number, who: string): Promise<string[]> {
  log(`preparing ${count} signed responses...`);
  const preparedAt = Date.now();
  const bodies: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const query = new URLSearchParams({
      client_id: env.client_id,
      connection: made.id,
      redirect_uri: CALLBACK,
      response_type: 'code',
      state: `s${i}`,
    });
    const res = await fetch(`${base}/sso/authorize?${query}`, { redirect: 'manual' });
    if (res.status !== 302) throw new Error(`GET /sso/authorize: ${res.status} ${await res.text()}`);
    const location = new URL(res.headers.get('location') ?? '');
    const request = readAuthnRequest(location.searchParams.get('SAMLRequest') ?? '');
    const xml = await idp.loginResponse(
      sp,
      { email: `${who}${i}@${domain}`, firstName: 'Bench', lastName: `${i}` },
      request.id,
    );
    bodies.push(
      `SAMLResponse=${encodeURIComponent(Buffer.from(xml).toString('base64'))}&RelayState=${encodeURIComponent(location.searchParams.get('RelayState') ?? '')}`,
    );
  }
  log(`prepared in ${((Date.now() - preparedAt) / 1000).toFixed(1)} s`);
  return bodies;
}

/** CPU ticks (1/100 s) of one process, from /proc. */
function ticksOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Starts bench/floors/acs.ts on this bench's database; resolves with it and its URL once it listens. */
async function startAcsFloor(databaseUrl: string): Promise<{ child: ChildProcess; url: string }> {
  const port = Number(args.port) === 0 ? 0 : Number(args.port) + 1;
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/floors/acs.ts'], {
    env: { ...process.env, PORT: String(port), DATABASE_URL: databaseUrl, ATRIUM_URL: base },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  try {
    for await (const line of lines) {
      if (line.startsWith('listening ')) return { child, url: `http://127.0.0.1:${line.slice(10).trim()}` };
    }
    throw new Error(`bench/floors/acs.ts exited with ${child.exitCode} before it listened`);
  } finally {
    clearTimeout(timer);
    lines.close();
  }
}

const connection = await loadConnection(deps.db, env.environment_id, made.id);
const codes: string[] = [];
let prepared = Date.now();

// ---- sso_saml_acs: responses made beforehand, each for its own authorization (GET /sso/authorize).
/** Atrium's ACS rate, set by its run, for the floor's ratio. */
let acsRps: number | undefined;
// The POSTs a stopped load generator left in flight still run in the server (their turns were
// freed when their connections closed): count the codes once two reads 100 ms apart agree.
const countCodes = async () =>
  (
    await deps.db
      .select({ n: sql<number>`count(*)::int` })
      .from(ssoCodes)
      .where(eq(ssoCodes.environmentId, env.environment_id))
  )[0]?.n ?? 0;

if (args.only !== 'token') {
  const responses = Number(args.responses);
  const bodies = await prepareResponses(responses, 'user');

  // CPU of one verification, alone: consumeSamlResponse on fresh responses (no HTTP, no sign-in),
  // and the library's floor beside it: node-saml's validatePostResponseAsync alone on the same kind
  // of response, configured as Atrium configures it (no replay cache, no mapping, no database).
  // Interleaved in blocks, so both see the same machine; the floor bounds the ACS at 1,000 / its ms
  // per second on one core.
  const verifications = Number(args.verifications);
  const blocks = 4;
  const perBlock = Math.max(1, Math.floor(verifications / blocks));
  const certificate = /<ds:X509Certificate>([^<]+)<\/ds:X509Certificate>/.exec(idp.metadataXml)?.[1] ?? '';
  const library = new SAML({
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    audience: sp.entityId,
    idpCert: certificate,
    wantAssertionsSigned: false,
    wantAuthnResponseSigned: false,
    validateInResponseTo: ValidateInResponseTo.never,
  });
  const atriumMs: number[] = [];
  const libraryMs: number[] = [];
  for (let block = 0; block < blocks; block += 1) {
    const direct: Array<{ form: { SAMLResponse: string }; expected: { samlRequestId: string } }> = [];
    const alone: string[] = [];
    for (let i = 0; i < perBlock; i += 1) {
      const { samlRequestId } = await startSaml(scope, connection, `sso_authorization_bench${block}_${i}`);
      const xml = await idp.loginResponse(sp, { email: `cpu${block}_${i}@${domain}` }, samlRequestId);
      direct.push({ form: { SAMLResponse: Buffer.from(xml).toString('base64') }, expected: { samlRequestId } });
      const plain = await idp.loginResponse(sp, { email: `lib${block}_${i}@${domain}` });
      alone.push(Buffer.from(plain).toString('base64'));
    }
    let from = process.cpuUsage();
    for (const { form, expected } of direct) await consumeSamlResponse(scope, connection, form, expected);
    atriumMs.push(cpuMs(from) / perBlock);
    from = process.cpuUsage();
    for (const SAMLResponse of alone) {
      const { profile } = await library.validatePostResponseAsync({ SAMLResponse });
      if (!profile) throw new Error('node-saml verified no profile');
    }
    libraryMs.push(cpuMs(from) / perBlock);
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? 0;
  const list = (values: number[]) => values.map((v) => v.toFixed(2)).join(' / ');
  log(
    `one verification (consumeSamlResponse): ${median(atriumMs).toFixed(2)} ms CPU (blocks ${list(atriumMs)}); ` +
      `node-saml alone (the library's floor): ${median(libraryMs).toFixed(2)} ms CPU (blocks ${list(libraryMs)}), ` +
      `at most ${(1000 / Math.max(0.001, median(libraryMs))).toFixed(0)} verifications/s per core (${(performance.now() / 1000).toFixed(1)} s since the start)`,
  );

  const acsFrom = await measureFrom();
  const acsCpu = acsFrom.cpu;
  const acs = await drive({
    url: base,
    method: 'POST',
    paths: [`/sso/saml/acs/${made.id}`],
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: '{pick}',
    picks: bodies,
    oneUse: true,
    connections: Number(args.connections),
    warmupSeconds: 0,
    durationSeconds: seconds,
  });
  const acsServerCpuMs = cpuMs(acsCpu);
  // A 302 is a redirect to the app: with `code=` a sign-in, with `error=` a refusal. The bench's
  // responses are all valid, so anything else (a 409, an error page) is a defect to look into.
  const signedIn = (acs.statusCodes['302'] ?? 0) as number;
  log(
    `sso_saml_acs: ${acs.requests} POSTs in ${acs.seconds.toFixed(1)} s = ${acs.rps.toFixed(0)}/s (target >= 200), p50 ${acs.latency.p50} ms, p99 ${acs.latency.p99} ms, ` +
      `statuses ${JSON.stringify(acs.statusCodes)}, server CPU ${(acsServerCpuMs / Math.max(1, acs.requests)).toFixed(2)} ms per POST` +
      (acs.requests >= responses ? ' (every prepared response was used: the run ended early)' : ''),
  );
  let codesIssued = await countCodes();
  for (let again = -1; again !== codesIssued; ) {
    again = codesIssued;
    await new Promise((resolve) => setTimeout(resolve, 100));
    codesIssued = await countCodes();
  }
  log(`  ${await perRequest(acsFrom, acs.requests)}`);
  log(
    `  ${signedIn} redirects, ${codesIssued} codes issued (one per sign-in, counted once the POSTs in flight when the run stopped had ended: those count here, not above)`,
  );
  acsRps = acs.rps;
}

// ---- sso_token: one-use codes minted beforehand through the SSO service (IdP-initiated sign-ins).
if (args.only !== 'acs') {
  const codeCount = Number(args.codes);
  log(`minting ${codeCount} codes...`);
  prepared = Date.now();
  // Eight sign-ins at a time, as the ACS runs them (500 people, each signing in again and again).
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < codeCount; i = next++) {
        const { redirectUrl } = await completeSignIn(scope, connection, null, {
          idpId: `token${i % 500}@${domain}`,
          email: `token${i % 500}@${domain}`,
          customAttributes: {},
          rawAttributes: {},
        });
        codes.push(new URL(redirectUrl).searchParams.get('code') ?? '');
      }
    }),
  );
  log(
    `minted in ${((Date.now() - prepared) / 1000).toFixed(1)} s (${(performance.now() / 1000).toFixed(1)} s since the start)`,
  );
  const tokenFrom = await measureFrom();
  const tokenCpu = tokenFrom.cpu;
  const token = await drive({
    url: base,
    method: 'POST',
    paths: ['/sso/token'],
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: `client_id=${env.client_id}&client_secret=${env.api_key}&grant_type=authorization_code&code={pick}`,
    picks: codes,
    oneUse: true,
    connections: Number(args.connections),
    warmupSeconds: 0,
    durationSeconds: Math.max(2, Math.floor(seconds / 2)),
  });
  log(
    `sso_token: ${token.requests} in ${token.seconds.toFixed(1)} s = ${token.rps.toFixed(0)}/s (target >= 1,000), p50 ${token.latency.p50} ms, p99 ${token.latency.p99} ms, ` +
      `statuses ${JSON.stringify(token.statusCodes)}, server CPU ${(cpuMs(tokenCpu) / Math.max(1, token.requests)).toFixed(2)} ms per request` +
      (token.requests >= codes.length ? ' (every code was spent: the run ended early)' : ''),
  );
  log(`  ${await perRequest(tokenFrom, token.requests)}`);
}

// ---- the ACS floor (bench/floors/acs.ts), last: in its own process, on a second set of fresh
// responses of new people, the same POSTs and load generator settings. Last, because its sign-ins
// are writes of their own: run before `sso_token`, they slowed the exchange from 962 to 573/s
// (PostgreSQL 659 against 1,255 µs per exchange; bench/README.md, the eleventh session).
if (acsRps !== undefined) {
  const acsRpsOf = acsRps;
  if (args['skip-floors']) log('ACS floor: skipped (--skip-floors)');
  else if (!process.env.DATABASE_URL || deps.driver !== 'postgres') log('ACS floor: needs PostgreSQL (DATABASE_URL)');
  else {
    // A fresh process: warmed first (its code compiled, its statements prepared) as Atrium was by
    // the requests above, with responses of their own, not measured.
    const warmups = Math.min(50, Math.ceil(Number(args.responses) / 5));
    const floorBodies = await prepareResponses(Number(args.responses) + warmups, 'floor');
    const floor = await startAcsFloor(process.env.DATABASE_URL);
    try {
      const floorPid = floor.child.pid as number;
      for (const body of floorBodies.splice(0, warmups)) {
        const res = await fetch(`${floor.url}/sso/saml/acs/${made.id}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body,
          redirect: 'manual',
        });
        if (res.status !== 302) throw new Error(`the ACS floor's warm-up: ${res.status} ${await res.text()}`);
      }
      const codesBefore = await countCodes();
      const from = await measureFrom();
      const floorTicks = ticksOf(floorPid);
      const run = await drive({
        url: floor.url,
        method: 'POST',
        paths: [`/sso/saml/acs/${made.id}`],
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: '{pick}',
        picks: floorBodies,
        oneUse: true,
        connections: Number(args.connections),
        warmupSeconds: 0,
        durationSeconds: seconds,
      });
      const floorMs = ((ticksOf(floorPid) - floorTicks) * 10) / Math.max(1, run.requests);
      let floorCodes = (await countCodes()) - codesBefore;
      for (let again = -1; again !== floorCodes; ) {
        again = floorCodes;
        await new Promise((resolve) => setTimeout(resolve, 100));
        floorCodes = (await countCodes()) - codesBefore;
      }
      log(
        `sso_saml_acs@floor: ${run.requests} POSTs in ${run.seconds.toFixed(1)} s = ${run.rps.toFixed(0)}/s, p50 ${run.latency.p50} ms, p99 ${run.latency.p99} ms, ` +
          `statuses ${JSON.stringify(run.statusCodes)}, floor CPU ${floorMs.toFixed(2)} ms per POST; ` +
          `Atrium / floor = ${(acsRpsOf / Math.max(0.01, run.rps)).toFixed(2)}` +
          (run.requests >= Number(args.responses) ? ' (every prepared response was used: the run ended early)' : ''),
      );
      // The bench process's own CPU is its idle share here (Atrium is not driven): PostgreSQL's is the floor's.
      log(`  ${await perRequest(from, run.requests)} (server: this process, idle; pg: the floor's statements)`);
      log(`  ${floorCodes} codes issued by the floor`);
    } finally {
      floor.child.kill('SIGTERM');
      if (floor.child.exitCode === null) await new Promise((resolve) => floor.child.once('exit', resolve));
    }
  }
}

await idp.close();
server.closeAllConnections();
server.close();
await handle.close();
