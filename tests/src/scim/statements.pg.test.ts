// The test twin of bench/scim-statements.ts: what one SCIM `POST /Users` sends to PostgreSQL,
// counted from the driver, so a change that adds a round trip to the initial sync (issue #36) is
// seen here, not only in a benchmark.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { directoryUsers, schema } from '@atrium/db';
import { createApp } from '@atrium/rest-facade';
import { createDirectory, newCaches, scopeOf } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { recordingClient, type Sent } from '../helpers/plans.ts';
import { HttpClient, newEnvironment } from '../helpers/world.ts';
import { scimUser } from './helpers.ts';

const databaseUrl = inject('databaseUrl');

describe.skipIf(!databaseUrl)('statements of SCIM POST /Users, one and at once (PostgreSQL only)', () => {
  const sent: Sent[] = [];
  // Event-loop turns (a check phase between any two I/O callbacks): statements sent in one turn
  // went without waiting for each other's results, one round trip.
  let turn = 0;
  let turning = false;
  const tick = () => {
    turn++;
    if (turning) setImmediate(tick);
  };
  const client = databaseUrl ? recordingClient(databaseUrl, sent, () => turn) : undefined;
  afterAll(async () => {
    await client?.end({ timeout: 5 });
  });

  it('provisions a new user in 6 statements (one more to make a quota shard, one to mark last_sync_at), without looking the token up again; 16 at once in at most 3 each', async () => {
    const env = await newEnvironment();
    // The app on a recording client, with caches of its own (the token is cached by this app).
    const deps = { ...env.deps, db: drizzle(client!, { schema }) as never, caches: newCaches() };
    const server = createServer(createApp(deps, { baseUrl: 'http://127.0.0.1' }).handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const org = await env.http.post('/organizations', { name: 'Statements' });
      const directory = await createDirectory(await scopeOf(env.deps, env.environmentId), {
        organization_id: org.body.id,
        name: 'Okta',
        type: 'okta scim v2.0',
      } as never);
      const scim = new HttpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {
        Authorization: `Bearer ${directory.bearer_token}`,
        'Content-Type': 'application/scim+json',
      });
      const base = `/scim/v2/${directory.id}/Users`;
      // The first POSTs look the token up, link the directory and mark it as synced.
      for (let i = 0; i < 2; i++) expect((await scim.post(base, scimUser())).status).toBe(201);
      for (let i = 0; i < 5; i++) {
        sent.length = 0;
        expect((await scim.post(base, scimUser())).status).toBe(201);
        const statements = sent.map((s) => s.sql.replace(/\s+/g, ' ').trim().toLowerCase());
        expect(statements.length, statements.join('\n')).toBeLessThanOrEqual(8);
        // Less a shard's first use (16 shards: every POST here may draw a new one) and the once-a-second mark.
        const steady = statements.filter(
          (s) => !s.startsWith('insert into "directory_quota_shards"') && !s.startsWith('update "directories"'),
        );
        expect(steady.length, statements.join('\n')).toBeLessThanOrEqual(6);
        expect(statements.filter((s) => s.includes('"token_hash"'))).toEqual([]);
        // Insert first: the user is not read before it is inserted.
        const firstUsers = statements.findIndex((s) => s.includes('"users"'));
        expect(statements[firstUsers]).toMatch(/^insert into "users"/);
        // The membership and its default role in one statement; the quota's place in the directory user's.
        const memberships = statements.filter((s) => s.includes('"organization_memberships"'));
        expect(memberships).toHaveLength(1);
        expect(memberships[0]).toContain('"organization_membership_roles"');
        const quota = steady.filter((s) => s.includes('"directory_quota_shards"'));
        expect(quota).toHaveLength(1);
        expect(quota[0]).toContain('insert into "directory_users"');
      }
      // The membership and the directory user need only the user's id: sent in one turn, after the user's insert answered.
      sent.length = 0;
      turning = true;
      tick();
      try {
        expect((await scim.post(base, scimUser())).status).toBe(201);
      } finally {
        turning = false;
      }
      const turnOf = (prefix: string) =>
        sent.find((s) => s.sql.replace(/\s+/g, ' ').trim().toLowerCase().startsWith(prefix))?.at;
      const membershipTurn = turnOf('with inserted as ( insert into "organization_memberships"');
      const directoryUserTurn = turnOf('with placed as ( update "directory_quota_shards"');
      expect(membershipTurn, JSON.stringify(sent.map((s) => [s.at, s.sql.slice(0, 60)]))).toBeDefined();
      expect(directoryUserTurn).toBe(membershipTurn);
      expect(turnOf('insert into "users"')).toBeLessThan(membershipTurn as number);
      // At once, the POSTs go as one transaction per batch (group commit, directories/sync.ts
      // `createUsersTogether`): far fewer statements, and transactions, than POSTs.
      sent.length = 0;
      const burst = await Promise.all(Array.from({ length: 16 }, () => scim.post(base, scimUser())));
      expect(burst.map((r) => r.status)).toEqual(burst.map(() => 201));
      const statements = sent.map((s) => s.sql.replace(/\s+/g, ' ').trim().toLowerCase());
      const begins = statements.filter((s) => s.startsWith('begin'));
      expect(begins.length, statements.join('\n')).toBeLessThanOrEqual(6);
      expect(statements.length / 16, statements.join('\n')).toBeLessThanOrEqual(3);
      const stored = await env.deps.db
        .select()
        .from(directoryUsers)
        .where(eq(directoryUsers.directoryId, directory.id));
      expect(stored).toHaveLength(8 + 16);
      expect(stored.every((row) => row.userId !== null)).toBe(true);
    } finally {
      server.close();
    }
  });
});
