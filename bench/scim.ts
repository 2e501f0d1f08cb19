/**
 * Directory sync at scale (issue #36, "Scale"), run by bench/run.ts after the organization
 * scenarios (see bench/README.md, "Directory sync (issue #36)"):
 *
 * - `scim_initial_sync`: an identity provider's initial sync into a fresh directory, 10,000 user
 *   POSTs then 500 groups with their memberships, 8 requests in flight (bench/scim-load.ts, its own
 *   process); meanwhile another tenant reads `GET /organizations/:id`, and its p95 is set against its
 *   p95 over the same time without the sync. Afterwards the stored rows are counted: nothing lost.
 * - `scim_group_patch_1000`: one PATCH adding 1,000 members to a new group, timed, five times.
 * - `scim_deep_page`: `GET /Users?startIndex=90001&count=100` against the first page, at 100,000
 *   directory users seeded set-based (as organizations are), driven by autocannon like every scenario.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { isDeepStrictEqual } from 'node:util';
import type { RequestSpec } from './companions.ts';
import type { ScenarioRun, ScimResults } from './results.ts';
import type { ReaderResult, ReaderSpec, SyncResult, SyncSpec } from './scim-load.ts';
import { type Exec, seededId, seededOrganizationId, seedOrganizations } from './seed.ts';

export const SCIM_SCENARIOS = ['scim_initial_sync', 'scim_group_patch_1000', 'scim_deep_page'] as const;
export type ScimScenario = (typeof SCIM_SCENARIOS)[number];

export const SYNC_USERS = 10_000;
export const SYNC_GROUPS = 500;
/** 500 groups × 20 = 10,000 memberships: every synced user in one group. */
export const SYNC_MEMBERS_PER_GROUP = 20;
export const SYNC_CONCURRENCY = 8;
export const PATCH_MEMBERS = 1_000;
export const PATCH_ROUNDS = 5;
export const DEEP_USERS = 100_000;
export const DEEP_START_INDEX = 90_001;
/** The reading tenant's seeded organizations (numbers above every other environment's). */
const READER_BASE = 30_000_000;
const READER_ORGS = 1_000;

type CpuSeconds = { server: number; postgres: number; load: number | null };

/** What bench/run.ts lends the SCIM scenarios. */
export interface ScimBenchContext {
  exec: Exec;
  baseUrl: string;
  root: string;
  tmpDir: string;
  serverPid: number | undefined;
  /** Which of the SCIM scenarios to run. */
  scenarios: Set<ScimScenario>;
  /** A new environment through the admin API: its id and API key. */
  newEnvironment(name: string): Promise<{ environment_id: string; api_key: string }>;
  /** Drives one autocannon run (as every scenario) and returns it. */
  measure(
    spec: RequestSpec,
    base: Pick<ScenarioRun, 'size' | 'organizations' | 'scenario' | 'title'>,
  ): Promise<ScenarioRun>;
  /** CPU seconds of Atrium (or `serverPid`: a floor), PostgreSQL and `loadPid` from now until `end()`. */
  cpuWindow(loadPid: number | undefined, serverPid?: number): { end(): CpuSeconds | null };
  /** Where the SCIM create floor (bench/floors/scim.ts) runs; undefined with `--skip-floors`. */
  floor?: { databaseUrl: string; port: number } | undefined;
  readerSeconds: number;
  /** Users the initial sync POSTs (SYNC_USERS unless told). */
  syncUsers: number;
  /** Requests the initial sync keeps in flight (SYNC_CONCURRENCY unless told). */
  syncConcurrency: number;
  log(line: string): void;
}

const DIRECTORY_ORG_BASE = 40_000_000;
let directoriesSeeded = 0;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A directory of a new organization, stored as the directories service stores one (the token as
 * its SHA-256), so the bench needs no operator surface; returns its id and bearer token.
 */
export async function seedDirectory(
  exec: Exec,
  environmentId: string,
  name: string,
): Promise<{ directoryId: string; organizationId: string; token: string }> {
  // Real `<prefix><ULID>` ids, numbered above every other seeded row.
  directoriesSeeded += 1;
  const organizationId = seededOrganizationId(DIRECTORY_ORG_BASE + directoriesSeeded);
  const directoryId = seededId('directory_', DIRECTORY_ORG_BASE + directoriesSeeded);
  const token = `scim_${[...randomBytes(40)].map((b) => BASE62[b % 62]).join('')}`;
  await exec(
    `insert into organizations (id, environment_id, name, metadata, domain_count, created_at, updated_at)
     values ($1, $2, $3, '{}'::jsonb, 0, now(), now())`,
    [organizationId, environmentId, `${name} customer`],
  );
  await exec(
    `insert into directories (id, environment_id, organization_id, type, name, state, external_key, token_hash,
            token_prefix, created_at, updated_at)
     values ($1, $2, $3, 'okta scim v2.0', $4, 'unlinked', $5, $6, $7, now(), now())`,
    [
      directoryId,
      environmentId,
      organizationId,
      name,
      randomBytes(8).toString('hex'),
      createHash('sha256').update(token).digest('hex'),
      token.slice(0, 13),
    ],
  );
  return { directoryId, organizationId, token };
}

/** The id of seeded directory user `n` (as `bench_id('directory_user_', n)` computes it). */
export const seededDirectoryUserId = (n: number) => seededId('directory_user_', n);

/**
 * Directory users 1..count of a directory, set-based in batches of 100k (`insert … select … from
 * generate_series`), each with the SCIM resource an identity provider would have pushed.
 */
export async function seedDirectoryUsers(
  exec: Exec,
  environmentId: string,
  directory: { directoryId: string; organizationId: string },
  count: number,
): Promise<void> {
  for (let start = 1; start <= count; start += 100_000) {
    const end = Math.min(count, start + 99_999);
    await exec(
      `insert into directory_users (id, environment_id, directory_id, organization_id, user_name, external_id, email,
              first_name, last_name, state, attributes, custom_attributes, version, created_at, updated_at)
       select bench_id('directory_user_', n), $1, $2, $3, 'seeded' || n || '@bench-directory.example.com',
              '00useeded' || n, 'seeded' || n || '@bench-directory.example.com', 'Given' || n, 'Family' || n, 'active',
              jsonb_build_object(
                'schemas', jsonb_build_array('urn:ietf:params:scim:schemas:core:2.0:User'),
                'userName', 'seeded' || n || '@bench-directory.example.com',
                'externalId', '00useeded' || n,
                'name', jsonb_build_object('givenName', 'Given' || n, 'familyName', 'Family' || n),
                'emails', jsonb_build_array(jsonb_build_object(
                  'primary', true, 'type', 'work', 'value', 'seeded' || n || '@bench-directory.example.com')),
                'displayName', 'Given' || n || ' Family' || n,
                'active', true),
              '{}'::jsonb, 1, bench_ts(n), bench_ts(n)
       from generate_series($4::bigint, $5::bigint) as n`,
      [environmentId, directory.directoryId, directory.organizationId, start, end],
    );
  }
  // The directory's quota counter (routers/src/directories/quota.ts): the users, spread over its 16 shards.
  await exec(
    `insert into directory_quota_shards (environment_id, directory_id, kind, shard, count)
     select $1, $2, 'users', s, ($3::int / 16) + case when s < $3::int % 16 then 1 else 0 end
     from generate_series(0, 15) as s
     on conflict (directory_id, kind, shard) do update set count = directory_quota_shards.count + excluded.count`,
    [environmentId, directory.directoryId, count],
  );
}

/** Starts bench/scim-load.ts with a spec; resolves its result line. */
function startLoad<T>(
  ctx: ScimBenchContext,
  spec: SyncSpec | ReaderSpec,
  name: string,
  onResult?: () => void,
  onUsers?: () => void,
): { child: ChildProcess; marker: Promise<void>; result: Promise<T> } {
  const file = join(ctx.tmpDir, `scim-${name}-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(spec));
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/scim-load.ts', file], {
    cwd: ctx.root,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  let markerSeen: () => void = () => {};
  const marker = new Promise<void>((resolve) => {
    markerSeen = resolve;
  });
  const result = new Promise<T>((resolve, reject) => {
    let last: string | undefined;
    lines.on('line', (line) => {
      if (line === 'start' || line === 'ready') markerSeen();
      else if (line === 'users') onUsers?.();
      else if (line.startsWith('{')) {
        last = line;
        // The measured window ends with the result, while the process is still there to read.
        onResult?.();
      }
    });
    child.once('exit', (code) => {
      if (code === 0 && last) resolve(JSON.parse(last) as T);
      else reject(new Error(`bench/scim-load.ts (${name}) exited with ${code}`));
    });
  });
  return { child, marker, result };
}

async function count(exec: Exec, sql: string, params: unknown[]): Promise<number> {
  const [row] = await exec(sql, params);
  return Number(row?.n ?? 0);
}

/** What a sync stored in a directory and provisioned from it: the "loses nothing" counts, Atrium's and the floor's. */
async function provisionedCounts(exec: Exec, directory: { directoryId: string; organizationId: string }) {
  const params = [directory.directoryId];
  return {
    directoryUsers: await count(exec, 'select count(*)::int as n from directory_users where directory_id = $1', params),
    provisionedUsers: await count(
      exec,
      'select count(*)::int as n from directory_users where directory_id = $1 and user_id is not null',
      params,
    ),
    managedMemberships: await count(
      exec,
      `select count(*)::int as n from organization_memberships
       where organization_id = $1 and directory_managed and status = 'active'`,
      [directory.organizationId],
    ),
  };
}

async function scimAvailable(ctx: ScimBenchContext, directoryId: string, token: string): Promise<string | undefined> {
  const res = await fetch(`${ctx.baseUrl}/scim/v2/${directoryId}/Users?count=1`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  const text = await res.text();
  if (res.status === 200) return undefined;
  return `GET /scim/v2/<directory>/Users answered ${res.status}: ${text.slice(0, 200)}`;
}

async function initialSync(ctx: ScimBenchContext): Promise<ScimResults['initialSync'] | string> {
  const env = await ctx.newEnvironment('bench-scim-sync');
  const reading = await ctx.newEnvironment('bench-scim-reader');
  await seedOrganizations(ctx.exec, reading.environment_id, READER_BASE, READER_BASE + READER_ORGS);
  const directory = await seedDirectory(ctx.exec, env.environment_id, 'Initial sync');
  const unavailable = await scimAvailable(ctx, directory.directoryId, directory.token);
  if (unavailable) return unavailable;

  const readerSpec = (seconds?: number): ReaderSpec => ({
    mode: 'reader',
    url: ctx.baseUrl,
    paths: Array.from({ length: READER_ORGS }, (_, i) => `/organizations/${seededOrganizationId(READER_BASE + i + 1)}`),
    headers: { Authorization: `Bearer ${reading.api_key}` },
    concurrency: 2,
    ...(seconds ? { seconds } : {}),
  });
  const alone = await startLoad<ReaderResult>(ctx, readerSpec(ctx.readerSeconds), 'reader-alone').result;
  ctx.log(`scim_initial_sync: the other tenant alone: p95 ${alone.p95} ms, ${alone.perSecond} req/s`);

  const reader = startLoad<ReaderResult>(ctx, readerSpec(), 'reader-during');
  await reader.marker;
  const syncSpec: SyncSpec = {
    mode: 'sync',
    scimUrl: `${ctx.baseUrl}/scim/v2/${directory.directoryId}`,
    token: directory.token,
    users: ctx.syncUsers,
    groups: SYNC_GROUPS,
    membersPerGroup: SYNC_MEMBERS_PER_GROUP,
    concurrency: ctx.syncConcurrency,
    tag: Date.now().toString(36),
  };
  // Atrium's and PostgreSQL's CPU from the sync's first request to its result line.
  const window: Window = { spent: null, users: null };
  const sync = startLoad<SyncResult>(
    ctx,
    syncSpec,
    'sync',
    () => {
      window.spent = window.cpu?.end() ?? null;
    },
    () => {
      window.users = window.cpu?.end() ?? null;
    },
  );
  await sync.marker;
  window.cpu = ctx.cpuWindow(undefined);
  const result = await sync.result;
  const cpuSeconds = window.spent ? { ...window.spent, load: result.cpuSeconds } : null;
  reader.child.stdin?.end('stop\n');
  const during = await reader.result;
  ctx.log(
    `scim_initial_sync: ${ctx.syncUsers} users in ${result.users.seconds} s = ${result.users.perSecond} users/s ` +
      `(statuses ${JSON.stringify(result.users.statuses)}); ${SYNC_GROUPS} groups + memberships in ${result.groups.seconds} s; ` +
      `other tenant p95 ${during.p95} ms during (alone ${alone.p95} ms)` +
      (result.failures.length > 0 ? `; first failures: ${result.failures.slice(0, 3).join(' | ')}` : ''),
  );
  const params = [directory.directoryId];
  const stored = {
    ...(await provisionedCounts(ctx.exec, directory)),
    groups: await count(ctx.exec, 'select count(*)::int as n from directory_groups where directory_id = $1', params),
    memberships: await count(
      ctx.exec,
      `select count(*)::int as n from directory_group_members m join directory_groups g on g.id = m.group_id
       where g.directory_id = $1`,
      params,
    ),
  };
  ctx.log(`scim_initial_sync: stored ${JSON.stringify(stored)}`);
  const usersCpu = window.users;
  const floor = ctx.floor
    ? await floorSync(ctx, ctx.floor, readerSpec, { ...syncSpec, groups: 0 }, { result, cpu: usersCpu }, directory)
    : undefined;
  return {
    users: ctx.syncUsers,
    groups: SYNC_GROUPS,
    concurrency: ctx.syncConcurrency,
    result,
    stored,
    reader: { alone, during },
    cpuSeconds,
    ...(usersCpu ? { usersCpuSeconds: { server: usersCpu.server, postgres: usersCpu.postgres } } : {}),
    ...(floor ? { floor } : {}),
  };
}

interface Window {
  cpu?: ReturnType<ScimBenchContext['cpuWindow']>;
  spent: CpuSeconds | null;
  users: CpuSeconds | null;
}

type SyncFloor = NonNullable<NonNullable<ScimResults['initialSync']>['floor']>;

/** Starts bench/floors/scim.ts on `port` against the bench database; resolves once it listens. */
async function startScimFloor(ctx: ScimBenchContext, floor: { databaseUrl: string; port: number }) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/floors/scim.ts'], {
    cwd: ctx.root,
    env: { ...process.env, PORT: String(floor.port), DATABASE_URL: floor.databaseUrl },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  try {
    for await (const line of lines) if (line.startsWith('listening')) return child;
    throw new Error(`bench/floors/scim.ts exited with ${child.exitCode} before it listened`);
  } finally {
    clearTimeout(timer);
    lines.close();
  }
}

/** A SCIM answer with what must differ between two creates blanked: ids, times, location, version. */
function shapeOf(text: string): unknown {
  const body = JSON.parse(text) as Record<string, unknown>;
  const meta = body.meta as Record<string, unknown> | undefined;
  return {
    ...body,
    id: typeof body.id,
    ...(meta ? { meta: { ...meta, created: 'time', lastModified: 'time', location: 'url', version: 'etag' } } : {}),
  };
}

/**
 * The SCIM create floor's users phase (bench/floors/scim.ts), right after Atrium's: a fresh
 * directory of a fresh environment, the same load generator settings (users only) and the same
 * other tenant reading Atrium meanwhile; then one probe body POSTed to both, their 201s compared
 * with ids, times, location and version blanked, and the floor's stored rows counted.
 */
async function floorSync(
  ctx: ScimBenchContext,
  floor: { databaseUrl: string; port: number },
  readerSpec: (seconds?: number) => ReaderSpec,
  spec: SyncSpec,
  atrium: { result: SyncResult; cpu: CpuSeconds | null },
  atriumDirectory: { directoryId: string; token: string },
): Promise<SyncFloor> {
  const env = await ctx.newEnvironment('bench-scim-floor');
  const directory = await seedDirectory(ctx.exec, env.environment_id, 'Initial sync floor');
  const child = await startScimFloor(ctx, floor);
  try {
    const floorUrl = `http://127.0.0.1:${floor.port}`;
    const reader = startLoad<ReaderResult>(ctx, readerSpec(), 'reader-floor');
    await reader.marker;
    const window: Window = { spent: null, users: null };
    const sync = startLoad<SyncResult>(
      ctx,
      { ...spec, scimUrl: `${floorUrl}/scim/v2/${directory.directoryId}`, token: directory.token },
      'sync-floor',
      () => {
        window.spent = window.cpu?.end() ?? null;
      },
      () => {
        window.users = window.cpu?.end() ?? null;
      },
    );
    await sync.marker;
    window.cpu = ctx.cpuWindow(undefined, child.pid);
    const result = await sync.result;
    reader.child.stdin?.end('stop\n');
    const readerDuring = await reader.result;
    // One more user, the same body, to each: Atrium's answer and the floor's, compared.
    const probe = JSON.stringify({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: `probe.${spec.tag}@bench-directory.example.com`,
      externalId: `00uprobe${spec.tag}`,
      name: { givenName: 'Probe', familyName: 'User' },
      emails: [{ primary: true, value: `probe.${spec.tag}@bench-directory.example.com`, type: 'work' }],
      active: true,
    });
    const post = async (url: string, token: string) => {
      const res = await fetch(`${url}/Users`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/scim+json' },
        body: probe,
      });
      return { status: res.status, text: await res.text() };
    };
    const a = await post(`${ctx.baseUrl}/scim/v2/${atriumDirectory.directoryId}`, atriumDirectory.token);
    const f = await post(`${floorUrl}/scim/v2/${directory.directoryId}`, directory.token);
    const sameShape = a.status === 201 && f.status === 201 ? isDeepStrictEqual(shapeOf(a.text), shapeOf(f.text)) : null;
    if (sameShape !== true) {
      ctx.log(
        `scim_initial_sync@floor: the floor's answer is not Atrium's: ${a.status} ${a.text} / ${f.status} ${f.text}`,
      );
    }
    const stored = {
      ...(await provisionedCounts(ctx.exec, directory)),
      events: await count(ctx.exec, 'select count(*)::int as n from events where environment_id = $1', [
        env.environment_id,
      ]),
    };
    const cpu = window.users;
    const users = spec.users;
    const perUser = (seconds: number | undefined) =>
      seconds === undefined ? null : Math.round((seconds * 1e6) / Math.max(1, users)) / 1000;
    const ratio = Math.round((atrium.result.users.perSecond / Math.max(0.01, result.users.perSecond)) * 100) / 100;
    ctx.log(
      `scim_initial_sync@floor: ${users} users in ${result.users.seconds} s = ${result.users.perSecond} users/s ` +
        `(statuses ${JSON.stringify(result.users.statuses)}; p50 ${result.users.latency.p50} ms); ` +
        `CPU ms per user: floor ${perUser(cpu?.server)}, PostgreSQL ${perUser(cpu?.postgres)} ` +
        `(Atrium ${perUser(atrium.cpu?.server)}, PostgreSQL ${perUser(atrium.cpu?.postgres)}); ` +
        `Atrium / floor = ${ratio}; same answer: ${sameShape}; stored ${JSON.stringify(stored)}; ` +
        `other tenant p95 ${readerDuring.p95} ms during the floor's sync` +
        (result.failures.length > 0 ? `; first failures: ${result.failures.slice(0, 3).join(' | ')}` : ''),
    );
    return {
      result,
      cpuSeconds: cpu ? { server: cpu.server, postgres: cpu.postgres, load: result.cpuSeconds } : null,
      ratio,
      sameShape,
      stored,
      reader: readerDuring,
    };
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  }
}

/** The directory of 100,000 seeded users that the PATCH and the deep page use. */
async function largeDirectory(ctx: ScimBenchContext) {
  const env = await ctx.newEnvironment('bench-scim-large');
  const directory = await seedDirectory(ctx.exec, env.environment_id, 'Large directory');
  const t0 = performance.now();
  await seedDirectoryUsers(ctx.exec, env.environment_id, directory, DEEP_USERS);
  await ctx.exec('vacuum analyze directory_users');
  await ctx.exec('checkpoint').catch(() => []);
  const seedSeconds = Math.round((performance.now() - t0) / 100) / 10;
  ctx.log(`seeded ${DEEP_USERS} directory users set-based in ${seedSeconds} s`);
  return { ...directory, seedSeconds };
}

async function groupPatch(
  ctx: ScimBenchContext,
  directory: { directoryId: string; token: string },
): Promise<NonNullable<ScimResults['groupPatch']>> {
  const scimUrl = `${ctx.baseUrl}/scim/v2/${directory.directoryId}`;
  const headers = { Authorization: `Bearer ${directory.token}`, 'Content-Type': 'application/scim+json' };
  const out: NonNullable<ScimResults['groupPatch']> = {
    members: PATCH_MEMBERS,
    ms: [],
    statuses: [],
    stored: [],
    failures: [],
  };
  for (let round = 0; round < PATCH_ROUNDS; round += 1) {
    const created = await fetch(`${scimUrl}/Groups`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
        displayName: `Big group ${round}`,
        members: [],
      }),
    });
    if (created.status !== 201) {
      out.failures.push(`POST /Groups: ${created.status} ${(await created.text()).slice(0, 200)}`);
      break;
    }
    const groupId = ((await created.json()) as { id: string }).id;
    const members = Array.from({ length: PATCH_MEMBERS }, (_, k) => ({
      value: seededDirectoryUserId(round * PATCH_MEMBERS + k + 1),
    }));
    const body = JSON.stringify({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'add', path: 'members', value: members }],
    });
    const t0 = performance.now();
    const res = await fetch(`${scimUrl}/Groups/${groupId}`, { method: 'PATCH', headers, body });
    const text = await res.text();
    const ms = Math.round((performance.now() - t0) * 10) / 10;
    out.ms.push(ms);
    out.statuses.push(res.status);
    if (res.status !== 200 && res.status !== 204) out.failures.push(`PATCH: ${res.status} ${text.slice(0, 200)}`);
    out.stored.push(
      await count(ctx.exec, 'select count(*)::int as n from directory_group_members where group_id = $1', [groupId]),
    );
    ctx.log(
      `scim_group_patch_1000 (${round + 1}/${PATCH_ROUNDS}): ${res.status} in ${ms} ms, ${out.stored.at(-1)} members stored`,
    );
  }
  return out;
}

async function deepPage(
  ctx: ScimBenchContext,
  directory: { directoryId: string; token: string; seedSeconds: number },
): Promise<NonNullable<ScimResults['deepPage']>> {
  const path = (start: number) => `/scim/v2/${directory.directoryId}/Users?startIndex=${start}&count=100`;
  const spec = (start: number): RequestSpec => ({
    method: 'GET',
    paths: [path(start)],
    headers: { Authorization: `Bearer ${directory.token}` },
  });
  const base = { size: DEEP_USERS, organizations: 0 };
  const first = await ctx.measure(spec(1), {
    ...base,
    scenario: 'scim_first_page',
    title: 'SCIM GET /Users?startIndex=1&count=100',
  });
  const deep = await ctx.measure(spec(DEEP_START_INDEX), {
    ...base,
    scenario: 'scim_deep_page',
    title: `SCIM GET /Users?startIndex=${DEEP_START_INDEX}&count=100`,
  });
  ctx.log(
    `scim_deep_page at ${DEEP_USERS} users: first page ${first.rps} req/s (p50 ${first.latency?.p50} ms), ` +
      `startIndex=${DEEP_START_INDEX} ${deep.rps} req/s (p50 ${deep.latency?.p50} ms)`,
  );
  return { users: DEEP_USERS, seedSeconds: directory.seedSeconds, first, deep };
}

/** Runs the chosen SCIM scenarios in turn. */
export async function runScimBench(ctx: ScimBenchContext): Promise<ScimResults> {
  const results: ScimResults = {};
  if (ctx.scenarios.has('scim_initial_sync')) {
    const sync = await initialSync(ctx);
    if (typeof sync === 'string') {
      ctx.log(`SCIM scenarios: not available (${sync})`);
      return { reason: sync };
    }
    results.initialSync = sync;
  }
  if (ctx.scenarios.has('scim_group_patch_1000') || ctx.scenarios.has('scim_deep_page')) {
    const directory = await largeDirectory(ctx);
    const unavailable = await scimAvailable(ctx, directory.directoryId, directory.token);
    if (unavailable) return { ...results, reason: unavailable };
    if (ctx.scenarios.has('scim_group_patch_1000')) results.groupPatch = await groupPatch(ctx, directory);
    if (ctx.scenarios.has('scim_deep_page')) results.deepPage = await deepPage(ctx, directory);
  }
  return results;
}
