// The contract's per-directory quotas (directory users, directory groups) through SCIM, with both
// quotas at 3 on a server of the test's own: over the quota, SCIM's 403 and nothing stored; racing
// creates never exceed it; a delete frees a place.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { directoryGroups, directoryQuotaShards, directoryUsers, users } from '@atrium/db';
import { createApp } from '@atrium/rest-facade';
import { DEFAULT_QUOTAS, type Deps } from '@atrium/routers';
import { and, eq, sum } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedEvents } from '../helpers/events.ts';
import { getWorld, HttpClient } from '../helpers/world.ts';
import { ERROR_SCHEMA, newDirectory, scimUser } from './helpers.ts';

const LIMIT = 3;
let deps: Deps;
let server: Server;
let url: string;

beforeAll(async () => {
  const world = await getWorld();
  deps = {
    ...world.deps,
    config: {
      ...world.deps.config,
      quotas: { ...DEFAULT_QUOTAS, directoryUsersPerDirectory: LIMIT, directoryGroupsPerDirectory: LIMIT },
    },
  };
  server = createServer(createApp(deps, { baseUrl: 'http://127.0.0.1' }).handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A fresh directory, spoken to over SCIM through the server with the quotas at 3. */
async function directory() {
  const d = await newDirectory();
  const scim = new HttpClient(url, {
    Authorization: `Bearer ${d.token}`,
    'Content-Type': 'application/scim+json',
  });
  return { ...d, scim };
}

async function storedUsers(directoryId: string) {
  return deps.db.select().from(directoryUsers).where(eq(directoryUsers.directoryId, directoryId));
}

async function storedGroupCount(directoryId: string) {
  return (await deps.db.select().from(directoryGroups).where(eq(directoryGroups.directoryId, directoryId))).length;
}

/** What the directory's shards count of `kind` (their sum: the number of rows). */
async function counted(directoryId: string, kind: 'users' | 'groups'): Promise<number> {
  const [row] = await deps.db
    .select({ n: sum(directoryQuotaShards.count) })
    .from(directoryQuotaShards)
    .where(and(eq(directoryQuotaShards.directoryId, directoryId), eq(directoryQuotaShards.kind, kind)));
  return Number(row?.n ?? 0);
}

function expectQuotaRefusal(res: { status: number; body: Record<string, unknown> }, quota: string) {
  expect(res.status).toBe(403);
  expect(res.body).toEqual({
    schemas: [ERROR_SCHEMA],
    status: '403',
    detail: expect.stringContaining(`at most ${LIMIT} (quota ${quota})`),
  });
}

describe('directory users per directory', () => {
  it('refuses the 4th user with 403 and stores nothing of it (no row, no Atrium user, no event)', async () => {
    const d = await directory();
    for (let i = 0; i < LIMIT; i++) expect((await d.scim.post(`${d.base}/Users`, scimUser())).status).toBe(201);
    const eventsBefore = (await storedEvents(d.env)).length;
    const over = scimUser();
    const res = await d.scim.post(`${d.base}/Users`, over);
    expectQuotaRefusal(res, 'directory_users_per_directory');
    expect(await storedUsers(d.directoryId)).toHaveLength(LIMIT);
    expect(await counted(d.directoryId, 'users')).toBe(LIMIT);
    const email = String(over.userName);
    expect(await deps.db.select().from(users).where(eq(users.email, email))).toHaveLength(0);
    expect(await storedEvents(d.env)).toHaveLength(eventsBefore);
    // The other directories of the environment are not affected: the quota is per directory.
    const other = await directory();
    expect((await other.scim.post(`${other.base}/Users`, scimUser())).status).toBe(201);
  });

  it('concurrent POSTs never exceed the quota: exactly 3 of 12 are created, the rest 403', async () => {
    const d = await directory();
    const answers = await Promise.all(Array.from({ length: 12 }, () => d.scim.post(`${d.base}/Users`, scimUser())));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(LIMIT).fill(201), ...Array(12 - LIMIT).fill(403)]);
    for (const r of answers.filter((a) => a.status === 403)) expectQuotaRefusal(r, 'directory_users_per_directory');
    expect(await storedUsers(d.directoryId)).toHaveLength(LIMIT);
    expect(await counted(d.directoryId, 'users')).toBe(LIMIT);
  });

  it('deleting a user frees its place; a refused duplicate (409) takes none', async () => {
    const d = await directory();
    const first = scimUser();
    const ids: string[] = [];
    for (const body of [first, scimUser(), scimUser()]) ids.push((await d.scim.post(`${d.base}/Users`, body)).body.id);
    expect((await d.scim.post(`${d.base}/Users`, scimUser())).status).toBe(403);
    expect((await d.scim.delete(`${d.base}/Users/${ids[0]}`)).status).toBe(204);
    expect(await counted(d.directoryId, 'users')).toBe(LIMIT - 1);
    // The first userName again: it is free (its user is gone), and so is a place.
    expect((await d.scim.post(`${d.base}/Users`, first)).status).toBe(201);
    expect((await d.scim.post(`${d.base}/Users`, scimUser())).status).toBe(403);
    // A 409 at the quota's edge: its place is given back with the rest of its transaction.
    await d.scim.delete(`${d.base}/Users/${ids[1]}`);
    expect((await d.scim.post(`${d.base}/Users`, first)).status).toBe(409);
    expect(await counted(d.directoryId, 'users')).toBe(LIMIT - 1);
    expect((await d.scim.post(`${d.base}/Users`, scimUser())).status).toBe(201);
    expect(await storedUsers(d.directoryId)).toHaveLength(LIMIT);
  });
});

describe('directory groups per directory', () => {
  it('refuses the 4th group with 403, storing nothing; a delete frees a place', async () => {
    const d = await directory();
    const ids: string[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await d.scim.post(`${d.base}/Groups`, { displayName: `G${i}` });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const eventsBefore = (await storedEvents(d.env)).length;
    expectQuotaRefusal(
      await d.scim.post(`${d.base}/Groups`, { displayName: 'Over' }),
      'directory_groups_per_directory',
    );
    expect(await storedGroupCount(d.directoryId)).toBe(LIMIT);
    expect(await storedEvents(d.env)).toHaveLength(eventsBefore);
    expect((await d.scim.delete(`${d.base}/Groups/${ids[0]}`)).status).toBe(204);
    expect((await d.scim.post(`${d.base}/Groups`, { displayName: 'Again' })).status).toBe(201);
    expect(await storedGroupCount(d.directoryId)).toBe(LIMIT);
    expect(await counted(d.directoryId, 'groups')).toBe(LIMIT);
  });

  it('concurrent group POSTs never exceed the quota', async () => {
    const d = await directory();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => d.scim.post(`${d.base}/Groups`, { displayName: `Race ${i}` })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(LIMIT);
    expect(answers.filter((r) => r.status === 403)).toHaveLength(8 - LIMIT);
    expect(await storedGroupCount(d.directoryId)).toBe(LIMIT);
  });
});
