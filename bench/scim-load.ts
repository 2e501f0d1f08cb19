/**
 * The SCIM bench's two load generators, each run as its own process by bench/scim.ts (never in
 * the server's or the bench's event loop). Reads one spec (a JSON file named on the command line):
 *
 * - `sync`: an identity provider's initial sync: `users` POST /Users at `concurrency` in flight,
 *   then `groups` POST /Groups (no members, as Entra creates them) each followed by one PATCH adding
 *   its members. Prints `start`, `users` when the users phase ends, then one JSON line with the
 *   timings and every status.
 * - `reader`: another tenant reading (`GET` of `paths` in turn, `concurrency` in flight) until a line
 *   `stop` arrives on stdin (or `seconds` pass). Prints `ready` after its first answer, then one JSON
 *   line with the latency percentiles.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { oktaUserBody } from './scim-user.ts';

export interface SyncSpec {
  mode: 'sync';
  /** The directory's SCIM base URL. */
  scimUrl: string;
  token: string;
  users: number;
  groups: number;
  /** Members of each group (users taken in turn, so every user is in `groups * membersPerGroup / users` groups). */
  membersPerGroup: number;
  concurrency: number;
  /** Makes user names unique to the run. */
  tag: string;
}

export interface ReaderSpec {
  mode: 'reader';
  url: string;
  paths: string[];
  headers: Record<string, string>;
  concurrency: number;
  /** Stops by itself after this many seconds (else on `stop`). */
  seconds?: number;
}

export interface Latencies {
  requests: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export interface SyncResult {
  users: { seconds: number; perSecond: number; statuses: Record<string, number>; latency: Latencies };
  groups: {
    seconds: number;
    statuses: Record<string, number>;
    patchStatuses: Record<string, number>;
    memberships: number;
    latency: Latencies;
  };
  totalSeconds: number;
  /** This load generator's own CPU seconds (user + system) over the sync. */
  cpuSeconds: number;
  /** The first few non-2xx answers, to say why. */
  failures: string[];
}

export interface ReaderResult extends Latencies {
  seconds: number;
  perSecond: number;
  statuses: Record<string, number>;
}

export function percentiles(samples: number[]): Latencies {
  const sorted = [...samples].sort((a, b) => a - b);
  const pick = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const round = (v: number) => Math.round(v * 100) / 100;
  return {
    requests: sorted.length,
    p50: round(pick(0.5)),
    p95: round(pick(0.95)),
    p99: round(pick(0.99)),
    max: round(sorted.at(-1) ?? 0),
    mean: round(sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length)),
  };
}

const count = (statuses: Record<string, number>, status: number) => {
  statuses[status] = (statuses[status] ?? 0) + 1;
};

/** Runs `total` jobs with `lanes` in flight. */
async function lanes(total: number, concurrency: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        await job(i);
      }
    }),
  );
}

/** The user an identity provider pushes, numbered within this sync. */
function userBody(spec: SyncSpec, i: number) {
  return oktaUserBody(`sync${i}.${spec.tag}@bench-directory.example.com`, `00u${spec.tag}${i}`, i);
}

async function sync(spec: SyncSpec): Promise<SyncResult> {
  const headers = { Authorization: `Bearer ${spec.token}`, 'Content-Type': 'application/scim+json' };
  const failures: string[] = [];
  const fail = async (what: string, res: Response) => {
    if (failures.length < 10) failures.push(`${what}: ${res.status} ${(await res.text()).slice(0, 300)}`);
    else await res.arrayBuffer().catch(() => {});
  };
  const ids: (string | undefined)[] = new Array(spec.users);
  const userStatuses: Record<string, number> = {};
  const userLatency: number[] = [];
  process.stdout.write('start\n');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await lanes(spec.users, spec.concurrency, async (i) => {
    const started = performance.now();
    const res = await fetch(`${spec.scimUrl}/Users`, {
      method: 'POST',
      headers,
      body: JSON.stringify(userBody(spec, i)),
    });
    userLatency.push(performance.now() - started);
    count(userStatuses, res.status);
    if (res.status !== 201) return fail(`POST /Users ${i}`, res);
    ids[i] = ((await res.json()) as { id: string }).id;
  });
  const usersSeconds = (performance.now() - t0) / 1000;
  // The users phase is over: the bench reads its CPU window here (users alone).
  process.stdout.write('users\n');

  const groupStatuses: Record<string, number> = {};
  const patchStatuses: Record<string, number> = {};
  const groupLatency: number[] = [];
  let memberships = 0;
  const t1 = performance.now();
  await lanes(spec.groups, spec.concurrency, async (g) => {
    let started = performance.now();
    const created = await fetch(`${spec.scimUrl}/Groups`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
        displayName: `Sync group ${g} ${spec.tag}`,
        externalId: `00g${spec.tag}${g}`,
      }),
    });
    groupLatency.push(performance.now() - started);
    count(groupStatuses, created.status);
    if (created.status !== 201) return fail(`POST /Groups ${g}`, created);
    const groupId = ((await created.json()) as { id: string }).id;
    const members = Array.from(
      { length: spec.membersPerGroup },
      (_, k) => ids[(g * spec.membersPerGroup + k) % spec.users],
    ).filter((id): id is string => id !== undefined);
    started = performance.now();
    const patched = await fetch(`${spec.scimUrl}/Groups/${groupId}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'Add', path: 'members', value: members.map((value) => ({ value })) }],
      }),
    });
    groupLatency.push(performance.now() - started);
    count(patchStatuses, patched.status);
    if (patched.status !== 200 && patched.status !== 204) return fail(`PATCH /Groups ${g}`, patched);
    await patched.arrayBuffer().catch(() => {});
    memberships += members.length;
  });
  const groupsSeconds = (performance.now() - t1) / 1000;
  const round = (v: number) => Math.round(v * 100) / 100;
  return {
    users: {
      seconds: round(usersSeconds),
      perSecond: round(spec.users / usersSeconds),
      statuses: userStatuses,
      latency: percentiles(userLatency),
    },
    groups: {
      seconds: round(groupsSeconds),
      statuses: groupStatuses,
      patchStatuses,
      memberships,
      latency: percentiles(groupLatency),
    },
    totalSeconds: round(usersSeconds + groupsSeconds),
    cpuSeconds: (() => {
      const used = process.cpuUsage(cpu0);
      return round((used.user + used.system) / 1e6);
    })(),
    failures,
  };
}

async function reader(spec: ReaderSpec): Promise<ReaderResult> {
  let stopped = false;
  const stop = () => {
    stopped = true;
  };
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() === 'stop') stop();
  });
  process.stdin.on('end', stop);
  if (spec.seconds) setTimeout(stop, spec.seconds * 1000).unref();
  const samples: number[] = [];
  const statuses: Record<string, number> = {};
  let n = 0;
  let ready = false;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: spec.concurrency }, async () => {
      while (!stopped) {
        const path = spec.paths[n++ % spec.paths.length] ?? '/';
        const started = performance.now();
        const res = await fetch(spec.url + path, { headers: spec.headers });
        await res.arrayBuffer();
        samples.push(performance.now() - started);
        count(statuses, res.status);
        if (!ready) {
          ready = true;
          process.stdout.write('ready\n');
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return {
    ...percentiles(samples),
    seconds: Math.round(seconds * 10) / 10,
    perSecond: Math.round(samples.length / seconds),
    statuses,
  };
}

async function main(): Promise<void> {
  const spec = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as SyncSpec | ReaderSpec;
  const result = spec.mode === 'sync' ? await sync(spec) : await reader(spec);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

if (process.argv[1]?.endsWith('scim-load.ts')) await main();
