/**
 * What `npm run bench` runs beside Atrium in the same rounds (bench/README.md, "Floors (issue
 * #35)"): the floors (bench/floors/*.ts, the least work a client request must do on Atrium's
 * stack) and, with `--peer <checkout>`, the public WorkOS emulator (`workos/emulate`, never
 * vendored). Each is driven right after the Atrium scenario it is paired with, by the same load
 * generator, and reported as Atrium / it.
 */
import type { LoadSpec } from './load.ts';

/** A request to drive (LoadSpec without where and how long). */
export type RequestSpec = Omit<LoadSpec, 'url' | 'connections' | 'warmupSeconds' | 'durationSeconds'>;

export interface Pairing {
  /** The Atrium scenario it is measured against. */
  scenario: string;
  /** Atrium / it must reach this (the issue's targets); undefined: reported only. */
  target?: number;
}

/**
 * The floors: each answers its Atrium scenarios' requests, the same JSON, with the same credential.
 * One process each, on `port + 2` and up in this order (bench/run.ts `startFloors`).
 */
export const FLOORS: { name: string; script: string; pairings: Pairing[] }[] = [
  {
    name: 'members',
    script: 'bench/floors/members.ts',
    pairings: [{ scenario: 'widgets_members_list', target: 0.85 }],
  },
  {
    name: 'graphql',
    script: 'bench/floors/graphql.ts',
    pairings: [{ scenario: 'graphql_organization', target: 0.95 }],
  },
  {
    name: 'rest',
    script: 'bench/floors/rest.ts',
    // Reported only: the issue's targets for these are against the peer (PEER_PAIRINGS).
    pairings: [{ scenario: 'get_organization' }, { scenario: 'list_memberships' }, { scenario: 'create_organization' }],
  },
];

/**
 * An answer with what must differ between two creates blanked (the top level's id and times), so
 * that a floor's 201 compares with Atrium's; a read's answer is compared whole.
 */
export function shapeOf(status: number, text: string): unknown {
  const body = JSON.parse(text) as unknown;
  if (status !== 201 || typeof body !== 'object' || body === null) return body;
  return { ...body, id: 'id', created_at: 'time', updated_at: 'time' };
}

/** The peer's scenarios (issue #35's side-by-side list) and their targets. */
export const PEER_PAIRINGS: Pairing[] = [
  { scenario: 'get_organization', target: 1.0 },
  { scenario: 'list_memberships', target: 1.0 },
  { scenario: 'create_organization', target: 0.6 },
  { scenario: 'list_domains_filter' },
];

/**
 * The peer's API keys. The emulator allows each key 1,000 requests a minute (its
 * src/core/server.ts answers 429 past that), which a throughput run passes in a second, so the
 * bench seeds it with this many keys (`peerSeedConfig`) and uses them in turn, one per request:
 * the limit is not what is measured, and the emulator runs unchanged.
 */
export const PEER_API_KEYS: string[] = Array.from({ length: 2_000 }, (_, n) => `sk_test_bench_${n + 1}`);

/**
 * The seed file (`--seed <file>.json`) that registers `PEER_API_KEYS` in the emulator's
 * allow-list, its map form (README, "API Keys"), all in the environment of its default key.
 */
export function peerSeedConfig(): { apiKeys: Record<string, { environment: string }> } {
  return { apiKeys: Object.fromEntries(PEER_API_KEYS.map((key) => [key, { environment: 'test' }])) };
}

const peerAuthorizations = PEER_API_KEYS.map((key) => `Bearer ${key}`);

/**
 * How a `workos/emulate` checkout is started, as its README and package.json say: the built CLI
 * (`dist/cli.js`, `bun run build`) by node (>= 22.11), else the sources by bun (`bun src/cli.ts`,
 * its `dev` script). Listens on `--port`; `GET /health` answers when it is ready.
 */
export function peerCommand(
  checkout: string,
  port: number,
  exists: (path: string) => boolean,
  seedFile: string,
): { command: string; args: string[] } {
  const flags = ['--port', String(port), '--seed', seedFile];
  const built = `${checkout}/dist/cli.js`;
  if (exists(built)) return { command: process.execPath, args: [built, ...flags] };
  return { command: 'bun', args: [`${checkout}/src/cli.ts`, ...flags] };
}

/** What the bench seeded into the peer through its API, to read back in the paired scenarios. */
export interface PeerSeed {
  organizationIds: string[];
  domains: string[];
  /** The organization whose memberships are listed (as many members as Atrium's group). */
  membersOrganizationId: string;
}

/** The peer's request for an Atrium scenario, mirroring Atrium's own (or undefined: not paired). */
export function peerSpec(scenario: string, seed: PeerSeed): RequestSpec | undefined {
  // No shared Authorization header: each request takes the next of the peer's keys.
  const auth = {};
  const authorizations = peerAuthorizations;
  switch (scenario) {
    case 'get_organization':
      return {
        method: 'GET',
        paths: seed.organizationIds.map((id) => `/organizations/${id}`),
        headers: auth,
        authorizations,
      };
    case 'list_memberships':
      return {
        method: 'GET',
        paths: [`/user_management/organization_memberships?organization_id=${seed.membersOrganizationId}&limit=10`],
        headers: auth,
        authorizations,
      };
    case 'create_organization':
      return {
        method: 'POST',
        paths: ['/organizations'],
        headers: { 'Content-Type': 'application/json' },
        authorizations,
        body: JSON.stringify({ name: 'Bench created {n}', metadata: { source: 'bench' } }),
      };
    case 'list_domains_filter':
      return {
        method: 'GET',
        paths: seed.domains.map((d) => `/organizations?domains=${d}`),
        headers: auth,
        authorizations,
      };
    default:
      return undefined;
  }
}

/**
 * Seeds the peer through its API (it keeps everything in memory): `organizations` organizations
 * with one verified domain each, and `members` users who are members of the first one. `concurrency`
 * requests at a time.
 */
export async function seedPeer(
  url: string,
  organizations: number,
  members: number,
  concurrency = 16,
): Promise<PeerSeed> {
  let sent = 0;
  const post = async (path: string, body: unknown): Promise<{ id: string }> => {
    const authorization = peerAuthorizations[sent++ % peerAuthorizations.length] ?? '';
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { Authorization: authorization, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`peer answered ${res.status} to POST ${path}: ${text.slice(0, 200)}`);
    return JSON.parse(text) as { id: string };
  };
  const inTurn = async <T>(count: number, make: (n: number) => Promise<T>): Promise<T[]> => {
    const out: T[] = new Array(count);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, count) }, async () => {
        while (next < count) {
          const n = next++;
          out[n] = await make(n);
        }
      }),
    );
    return out;
  };
  const domains = Array.from({ length: organizations }, (_, n) => `p${n + 1}.bench-peer.com`);
  const orgs = await inTurn(organizations, (n) =>
    post('/organizations', { name: `Peer ${n + 1}`, domain_data: [{ domain: domains[n], state: 'verified' }] }),
  );
  const first = orgs[0]?.id;
  if (!first) throw new Error('the peer was seeded with no organization');
  await inTurn(members, async (n) => {
    const user = await post('/user_management/users', { email: `member${n + 1}@o1.bench-peer.com` });
    await post('/user_management/organization_memberships', { user_id: user.id, organization_id: first });
  });
  return { organizationIds: orgs.map((o) => o.id), domains, membersOrganizationId: first };
}
