// Concurrent SCIM `POST /Users` of one directory go as one transaction (directories/sync.ts
// `createUsersTogether`, issue #36): each caller still gets its own outcome, every user is stored
// with its three events, a duplicate is refused alone, one e-mail links one Atrium user, and the
// quota's shards count exactly what was stored.
import { directories, directoryQuotaShards, directoryUsers, organizationMemberships, users } from '@atrium/db';
import { and, eq, sum } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { storedEvents } from '../helpers/events.ts';
import { getWorld } from '../helpers/world.ts';
import { newDirectory, scimUser, type TestDirectory } from './helpers.ts';

beforeAll(() => getWorld().then(() => undefined));

async function storedUsers(d: TestDirectory) {
  return d.env.deps.db.select().from(directoryUsers).where(eq(directoryUsers.directoryId, d.directoryId));
}

/** What the directory's user shards count (their sum: the directory users placed). */
async function counted(d: TestDirectory): Promise<number> {
  const [row] = await d.env.deps.db
    .select({ n: sum(directoryQuotaShards.count) })
    .from(directoryQuotaShards)
    .where(and(eq(directoryQuotaShards.directoryId, d.directoryId), eq(directoryQuotaShards.kind, 'users')));
  return Number(row?.n ?? 0);
}

async function eventsNamed(d: TestDirectory, name: string) {
  return (await storedEvents(d.env)).filter((e) => e.event === name).map((e) => e.data as Record<string, unknown>);
}

describe('SCIM POST /Users at once, as one transaction', () => {
  it('20 at once: all 201, each stored and provisioned with its three events, the quota counted exactly', async () => {
    const d = await newDirectory();
    const bodies = Array.from({ length: 20 }, () => scimUser());
    const answers = await Promise.all(bodies.map((body) => d.scim.post(`${d.base}/Users`, body)));
    expect(answers.map((r) => r.status)).toEqual(bodies.map(() => 201));
    // Each caller got its own user back.
    expect(answers.map((r) => r.body.userName)).toEqual(bodies.map((b) => b.userName));
    const ids = answers.map((r) => r.body.id as string);
    expect(new Set(ids).size).toBe(20);

    const stored = await storedUsers(d);
    expect(stored.map((row) => row.id).sort()).toEqual([...ids].sort());
    expect(stored.every((row) => row.userId !== null)).toBe(true);
    expect(new Set(stored.map((row) => row.userId)).size).toBe(20);
    const memberships = await d.env.deps.db
      .select()
      .from(organizationMemberships)
      .where(eq(organizationMemberships.organizationId, d.organizationId));
    expect(memberships).toHaveLength(20);
    expect(memberships.every((m) => m.status === 'active' && m.directoryManaged)).toBe(true);

    expect((await eventsNamed(d, 'dsync.user.created')).map((e) => e.id).sort()).toEqual([...ids].sort());
    const userIds = stored.map((row) => row.userId).sort();
    expect((await eventsNamed(d, 'user.created')).map((e) => e.id).sort()).toEqual(userIds);
    expect((await eventsNamed(d, 'organization_membership.created')).map((e) => e.user_id).sort()).toEqual(userIds);
    expect(await eventsNamed(d, 'dsync.activated')).toHaveLength(1);
    // The first write activated the directory: `dsync.activated` comes before every user's events.
    const order = (await storedEvents(d.env)).map((e) => e.event);
    for (const name of ['user.created', 'organization_membership.created', 'dsync.user.created'])
      expect(order.indexOf('dsync.activated')).toBeLessThan(order.indexOf(name));

    expect(await counted(d)).toBe(20);
    const [directory] = await d.env.deps.db.select().from(directories).where(eq(directories.id, d.directoryId));
    expect(directory?.state).toBe('linked');
    expect(directory?.lastSyncAt).not.toBeNull();
  });

  it('a duplicate userName inside a burst: 409 uniqueness for it alone, 201 for the others', async () => {
    const d = await newDirectory();
    // One user first, so that the burst's duplicate is refused whichever of the burst goes first.
    const taken = scimUser();
    expect((await d.scim.post(`${d.base}/Users`, taken)).status).toBe(201);
    const bodies = Array.from({ length: 10 }, () => scimUser());
    bodies.splice(5, 0, { ...scimUser(), userName: String(taken.userName).toUpperCase() });
    const answers = await Promise.all(bodies.map((body) => d.scim.post(`${d.base}/Users`, body)));
    expect(answers.map((r) => r.status)).toEqual(bodies.map((_, i) => (i === 5 ? 409 : 201)));
    expect(answers[5]?.body.scimType).toBe('uniqueness');

    const stored = await storedUsers(d);
    expect(stored).toHaveLength(11);
    expect(await eventsNamed(d, 'dsync.user.created')).toHaveLength(11);
    expect(await eventsNamed(d, 'user.created')).toHaveLength(11);
    expect(await eventsNamed(d, 'organization_membership.created')).toHaveLength(11);
    // The refused one took no place, made no Atrium user.
    expect(await counted(d)).toBe(11);
    expect(stored.every((row) => row.userId !== null)).toBe(true);
  });

  it('the same userName twice in one burst: one 201, one 409, one row', async () => {
    const d = await newDirectory();
    const twice = scimUser();
    const bodies = [scimUser(), scimUser(), twice, scimUser(), { ...twice, externalId: 'other' }, scimUser()];
    const answers = await Promise.all(bodies.map((body) => d.scim.post(`${d.base}/Users`, body)));
    expect(answers.filter((_, i) => i !== 2 && i !== 4).map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect([answers[2]?.status, answers[4]?.status].sort()).toEqual([201, 409]);
    expect(await storedUsers(d)).toHaveLength(5);
    expect(await counted(d)).toBe(5);
    expect(await eventsNamed(d, 'dsync.user.created')).toHaveLength(5);
  });

  it('two users with one e-mail in one burst link to one Atrium user (one user.created, one membership)', async () => {
    const d = await newDirectory();
    const email = `shared-${Date.now().toString(36)}-${process.pid}@example.com`;
    const shared = (userName: string) =>
      scimUser({ userName, emails: [{ primary: true, value: email, type: 'work' }] });
    const bodies = [scimUser(), shared(`a-${email}`), scimUser(), shared(`b-${email}`), scimUser()];
    const answers = await Promise.all(bodies.map((body) => d.scim.post(`${d.base}/Users`, body)));
    expect(answers.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);

    const stored = await storedUsers(d);
    const sharing = stored.filter((row) => row.email === email);
    expect(sharing).toHaveLength(2);
    expect(sharing[0]?.userId).toBeTruthy();
    expect(sharing[1]?.userId).toBe(sharing[0]?.userId);
    const atrium = await d.env.deps.db
      .select()
      .from(users)
      .where(and(eq(users.environmentId, d.env.environmentId), eq(users.email, email)));
    expect(atrium).toHaveLength(1);
    expect((await eventsNamed(d, 'user.created')).filter((e) => e.email === email)).toHaveLength(1);
    const memberships = await d.env.deps.db
      .select()
      .from(organizationMemberships)
      .where(eq(organizationMemberships.organizationId, d.organizationId));
    expect(memberships).toHaveLength(4);
    expect(await eventsNamed(d, 'dsync.user.created')).toHaveLength(5);
    expect(await counted(d)).toBe(5);
  });
});
