// A lone SCIM `POST /Users` that PostgreSQL aborts in a deadlock with a concurrent write of the
// same userName (a group-committed batch, directories/sync.ts) runs again, so Okta sees 201 or 409
// `uniqueness`, never 409 "retry it". PostgreSQL only: PGlite has one connection and cannot deadlock.
import { directories, directoryUsers, newId, organizationMemberships, schema, users } from '@atrium/db';
import { and, eq, sql, TransactionRollbackError } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { storedEventData } from '../helpers/events.ts';
import { getWorld, type HttpResponse } from '../helpers/world.ts';
import { newDirectory, scimUser, type TestDirectory } from './helpers.ts';

const databaseUrl = inject('databaseUrl');

describe.skipIf(!databaseUrl)('SCIM POST /Users that loses a deadlock (PostgreSQL only)', () => {
  // The other writer's own connections (one for its transaction, one to watch the locks).
  let client: postgres.Sql | undefined;
  let other: ReturnType<typeof drizzle<typeof schema>>;
  beforeAll(async () => {
    await getWorld();
    client = postgres(databaseUrl as string, { max: 2, onnotice: () => {} });
    other = drizzle(client, { schema });
  });
  afterAll(async () => {
    await client?.end({ timeout: 5 });
  });

  /**
   * Provokes the deadlock: another transaction holds the directory's row, the create inserts its
   * user and then waits for that row (a first write links the directory), and the other inserts a
   * directory user of the same userName, so each waits for the other. The create has the shorter
   * `deadlock_timeout` (the server's 1 s against 10 s), so PostgreSQL aborts the create. The other
   * then commits (`keep`) or rolls back; answers the create's response.
   */
  async function createLosingDeadlock(d: TestDirectory, body: Record<string, unknown>, keep: boolean) {
    let posted: Promise<HttpResponse> | undefined;
    let otherInserted = false;
    const run = other.transaction(async (tx) => {
      await tx.execute(sql`set local deadlock_timeout = '10s'`);
      const [me] = await tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`);
      await tx
        .select({ id: directories.id })
        .from(directories)
        .where(eq(directories.id, d.directoryId))
        .for('no key update');
      posted = d.scim.post(`${d.base}/Users`, body);
      // The create waits for this transaction (on the directory's row) before the other inserts.
      await vi.waitFor(
        async () => {
          const waiting = await other.execute(
            sql`select pid from pg_stat_activity where ${me?.pid}::int = any(pg_blocking_pids(pid))`,
          );
          expect(waiting).toHaveLength(1);
        },
        { timeout: 5_000, interval: 5 },
      );
      const now = new Date();
      await tx.insert(directoryUsers).values({
        id: newId('directoryUser'),
        environmentId: d.env.environmentId,
        directoryId: d.directoryId,
        organizationId: d.organizationId,
        userName: String(body.userName).toUpperCase(),
        externalId: 'the-other-writer',
        createdAt: now,
        updatedAt: now,
      });
      // Past the insert: the create's transaction ended while it waited for this one, so it was aborted.
      otherInserted = true;
      if (!keep) tx.rollback();
    });
    await run.catch((error: unknown) => {
      if (keep || !(error instanceof TransactionRollbackError)) throw error;
    });
    expect(otherInserted).toBe(true);
    return (await posted) as HttpResponse;
  }

  async function stored(d: TestDirectory, email: string) {
    const rows = await d.env.deps.db.select().from(directoryUsers).where(eq(directoryUsers.directoryId, d.directoryId));
    const atrium = await d.env.deps.db
      .select()
      .from(users)
      .where(and(eq(users.environmentId, d.env.environmentId), eq(users.email, email)));
    const memberships = await d.env.deps.db
      .select()
      .from(organizationMemberships)
      .where(eq(organizationMemberships.organizationId, d.organizationId));
    const [directory] = await d.env.deps.db.select().from(directories).where(eq(directories.id, d.directoryId));
    return { rows, atrium, memberships, directory };
  }

  it('the other writer rolls back: the create runs again and answers 201, stored once with its events once', async () => {
    const d = await newDirectory();
    const body = scimUser();
    const email = String(body.userName);
    const answer = await createLosingDeadlock(d, body, false);
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body.userName).toBe(body.userName);

    const { rows, atrium, memberships, directory } = await stored(d, email);
    expect(rows.map((row) => row.id)).toEqual([answer.body.id]);
    expect(atrium).toHaveLength(1);
    expect(rows[0]?.userId).toBe(atrium[0]?.id);
    expect(memberships.map((m) => [m.userId, m.status, m.directoryManaged])).toEqual([[atrium[0]?.id, 'active', true]]);
    expect(directory?.state).toBe('linked');
    // The aborted run's events went with it: each event once.
    expect((await storedEventData(d.env, 'dsync.user.created')).map((e) => e.id)).toEqual([answer.body.id]);
    expect(await storedEventData(d.env, 'user.created')).toHaveLength(1);
    expect(await storedEventData(d.env, 'organization_membership.created')).toHaveLength(1);
    expect(await storedEventData(d.env, 'dsync.activated')).toHaveLength(1);
  });

  it('the other writer commits the same userName: the create runs again and answers 409 uniqueness, storing nothing', async () => {
    const d = await newDirectory();
    const body = scimUser();
    const email = String(body.userName);
    const answer = await createLosingDeadlock(d, body, true);
    expect(answer.status, answer.text).toBe(409);
    expect(answer.body.scimType).toBe('uniqueness');
    // The userName's refusal, not the aborted transaction's ("conflicted with a concurrent request").
    expect(answer.body.detail).toBe('A user with this userName already exists in the directory.');

    const { rows, atrium, memberships, directory } = await stored(d, email);
    expect(rows.map((row) => row.externalId)).toEqual(['the-other-writer']);
    expect(atrium).toEqual([]);
    expect(memberships).toEqual([]);
    expect(directory?.state).toBe('unlinked');
    expect(await storedEventData(d.env, 'dsync.user.created')).toEqual([]);
    expect(await storedEventData(d.env, 'user.created')).toEqual([]);
    expect(await storedEventData(d.env, 'dsync.activated')).toEqual([]);
  });
});
