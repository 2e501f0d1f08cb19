import { openDb, schema } from '@atrium/db';
import {
  createCaller,
  createInnerContext,
  fanOutEvents,
  purgeExpiredEvents,
  purgeExpiredSessions,
  takeDueDeliveries,
  takeDueDomains,
} from '@atrium/routers';
import { drizzle } from 'drizzle-orm/postgres-js';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  type Exec,
  installSeedHelpers,
  seededDomain,
  seededOrganizationId,
  seedOrganizations,
} from '../../../bench/seed.ts';
import { newMember } from '../helpers/people.ts';
import { literal, planNodes, recordingClient, type Sent, scansOf } from '../helpers/plans.ts';
import { newEnvironment } from '../helpers/world.ts';

/**
 * On PostgreSQL every statement is prepared and planned once per connection (a generic plan):
 * re-planning each execution (PostgreSQL's `auto` mode keeps custom plans for the list query,
 * whose generic cost looks higher) cost more than running it (measured: 0.21 ms planning,
 * 0.16 ms executing a first page at 100,000 organizations). A generic plan does not know the
 * parameters, so these tests hold the statements the service actually sends to plans that
 * still use their indexes; the partial indexes need their predicate as a literal.
 */
const databaseUrl = inject('databaseUrl');

describe.skipIf(!databaseUrl)('generic plans (PostgreSQL only)', () => {
  const sent: Sent[] = [];
  const client = databaseUrl ? recordingClient(databaseUrl, sent) : undefined;
  afterAll(async () => {
    await client?.end({ timeout: 5 });
  });

  /**
   * The generic plan of the first statement sent by `run` that matches `pick`. Without
   * `seqscan`, sequential scans are priced out: what is left is what the planner can use at
   * any table size (for tables a test leaves nearly empty).
   */
  async function genericPlanOf(run: () => Promise<unknown>, pick: (sql: string) => boolean, seqscan = false) {
    sent.length = 0;
    await run();
    const matching = sent.filter((s) => pick(s.sql));
    expect(matching.length).toBeGreaterThan(0);
    const { sql, params } = matching[0]!;
    const name = `plan_probe_${Math.random().toString(36).slice(2)}`;
    return client!.begin(async (tx) => {
      if (!seqscan) await tx.unsafe('set local enable_seqscan = off');
      await tx.unsafe(`prepare ${name} as ${sql}`);
      const explained = await tx.unsafe(`explain (format json) execute ${name}(${params.map(literal).join(', ')})`);
      await tx.unsafe(`deallocate ${name}`);
      return planNodes(explained);
    });
  }

  it('plans every prepared statement once per connection by default, and not with prepare: false', async () => {
    for (const [prepare, mode] of [
      [undefined, 'force_generic_plan'],
      [false, 'auto'],
    ] as const) {
      const handle = await openDb({ databaseUrl: databaseUrl as string, poolSize: 1, prepare });
      try {
        const rows = (await handle.db.execute('show plan_cache_mode')) as unknown as { plan_cache_mode: string }[];
        expect(rows[0]?.plan_cache_mode).toBe(mode);
      } finally {
        await handle.close();
      }
    }
  });

  it('reads organizations by id, by page and by domain through their indexes, without a sort', async () => {
    const env = await newEnvironment();
    const db = drizzle(client!, { schema });
    const caller = createCaller(createInnerContext({ ...env.deps, db: db as never }, `Bearer ${env.apiKey}`));
    // Statistics like a real table's: 20,000 organizations with a domain each (set-based, as
    // the benchmark seeds; numbers no other test seeds), then ANALYZE.
    const exec: Exec = (text, params = []) => client!.unsafe(text, params as never[]) as never;
    await installSeedHelpers(exec);
    await seedOrganizations(exec, env.environmentId, 70_000_000, 70_020_000);
    await client!.unsafe('analyze organizations, organization_domains');
    const seeded = seededOrganizationId(70_010_000);

    const byId = await genericPlanOf(
      () => caller.organizations.get({ id: seeded }),
      (s) => s.startsWith('select') && s.includes('"organizations"."id" = $'),
      true,
    );
    // One row by key: the primary key or (environment_id, id), both unique lookups.
    expect(scansOf(byId, 'organizations')).toHaveLength(1);
    expect(['Index Scan organizations_pkey', 'Index Scan organizations_environment_id_idx']).toContain(
      scansOf(byId, 'organizations')[0],
    );

    const firstPage = await genericPlanOf(
      () => caller.organizations.list({ limit: 10 }),
      (s) => s.includes('from "organizations"') && s.includes('limit $'),
      true,
    );
    expect(scansOf(firstPage, 'organizations')).toEqual(['Index Scan organizations_environment_id_idx']);
    expect(firstPage.some((n) => n['Node Type'] === 'Sort')).toBe(false);

    const deepPage = await genericPlanOf(
      () => caller.organizations.list({ limit: 10, after: seeded }),
      (s) => s.includes('from "organizations"') && s.includes('"organizations"."id" < $'),
      true,
    );
    expect(scansOf(deepPage, 'organizations')).toEqual(['Index Scan organizations_environment_id_idx']);
    expect(deepPage.some((n) => n['Node Type'] === 'Sort')).toBe(false);

    const byDomain = await genericPlanOf(
      () => caller.organizations.list({ domains: [seededDomain(70_010_000)] }),
      (s) => s.includes('any($'),
      true,
    );
    expect(scansOf(byDomain, 'organization_domains')).toContain(
      'Index Scan organization_domains_environment_domain_idx',
    );
    // The organizations by key, from the array of their ids: an index scan or a bitmap scan of
    // the primary key, never a walk of the environment's organizations.
    expect(['Index Scan organizations_pkey', 'Bitmap Heap Scan']).toContain(scansOf(byDomain, 'organizations')[0]);
    expect(scansOf(byDomain, 'organizations')).toHaveLength(1);
    expect(byDomain.flatMap((n) => (n['Index Name']?.startsWith('organizations') ? [n['Index Name']] : []))).toEqual([
      'organizations_pkey',
    ]);
  });

  it("walks a group's memberships through an index in their order, without a sort, on every page", async () => {
    const env = await newEnvironment();
    const organization = await env.caller.organizations.create({ name: 'Plans' });
    const group = await env.caller.groups.create({ organization_id: organization.id, name: 'G' });
    const members = [];
    for (let i = 0; i < 3; i += 1) {
      const { membership } = await newMember(env, organization.id);
      await env.caller.groups.memberships.add({
        organization_id: organization.id,
        group_id: group.id,
        organization_membership_id: membership.id,
      });
      members.push(membership.id);
    }
    const db = drizzle(client!, { schema });
    const caller = createCaller(createInnerContext({ ...env.deps, db: db as never }, `Bearer ${env.apiKey}`));
    const path = { organization_id: organization.id, group_id: group.id };
    for (const input of [
      { ...path, limit: 2 },
      { ...path, limit: 2, after: members[0] },
      { ...path, before: members[2] },
    ]) {
      const plan = await genericPlanOf(
        () => caller.groups.memberships.list(input),
        (s) => s.includes('from "group_memberships"') && s.includes('limit $'),
      );
      expect(scansOf(plan, 'group_memberships')).toHaveLength(1);
      // Either index yields the page in order for one group: (environment_id, group_id, membership)
      // or the primary key (group_id, membership), which one depends on the table's statistics.
      expect(scansOf(plan, 'group_memberships')[0]).toMatch(/^Index (Only )?Scan group_memberships_(group_idx|pkey)$/);
      expect(plan.some((n) => n['Node Type'] === 'Sort')).toBe(false);
    }
  });

  it('reads a page of memberships with their users in one statement, each user by primary key', async () => {
    const env = await newEnvironment();
    const organization = await env.caller.organizations.create({ name: 'Plans' });
    const users = [];
    for (let i = 0; i < 3; i += 1) users.push((await newMember(env, organization.id)).user);
    const db = drizzle(client!, { schema });
    const caller = createCaller(createInnerContext({ ...env.deps, db: db as never }, `Bearer ${env.apiKey}`));
    sent.length = 0;
    const page = await caller.organizationMemberships.list({
      organization_id: organization.id,
      limit: 100,
      order: 'asc',
    });
    expect(page.data.map((m) => m.user)).toEqual(users);
    // The embedded users come with the page, not one query per membership.
    expect(sent.filter((s) => s.sql.includes('"organization_memberships"'))).toHaveLength(1);
    const plan = await genericPlanOf(
      () => caller.organizationMemberships.list({ organization_id: organization.id, limit: 100 }),
      (s) => s.includes('from "organization_memberships"') && s.includes('limit $'),
    );
    expect(scansOf(plan, 'users')).toEqual(['Index Scan users_pkey']);
  });

  it('finds due webhook deliveries, due domain checks and events to fan out through their partial indexes', async () => {
    const db = drizzle(client!, { schema }) as never;
    // Each claim is a skip scan over environments (the first environment, then the next one per
    // step; EXPLAIN without VERBOSE leaves that step's probe out) and a LATERAL take of one
    // environment's rows: every read of the table goes through its partial index.
    const fair = { perEnvironment: 4, cursor: 'env_0' };
    const onIndex = (index: string) => [`Index Only Scan ${index}`, `Index Scan ${index}`];
    const busy = { endpoints: ['we_x'], environments: ['env_x'] };
    const deliveries = await genericPlanOf(
      () => takeDueDeliveries(db, new Date(), 10, 30_000, fair, busy),
      (s) => s.includes('for update'),
    );
    expect(scansOf(deliveries, 'webhook_deliveries')).toEqual(onIndex('webhook_deliveries_due_idx'));

    const domains = await genericPlanOf(
      () => takeDueDomains(db, new Date(), 10, 30_000, fair),
      (s) => s.includes('for update'),
    );
    expect(scansOf(domains, 'organization_domains')).toEqual(onIndex('organization_domains_due_idx'));

    const fanout = await genericPlanOf(
      () => fanOutEvents(db, new Date(), 10, fair),
      (s) => s.includes('for update'),
    );
    expect(scansOf(fanout, 'events')).toEqual(onIndex('events_fanout_pending_idx'));
  });

  it('purges expired events by primary key, without scanning the events table', async () => {
    const env = await newEnvironment();
    // 20,000 events of the last 20 days (none expired), then ANALYZE: the generic plan of a
    // semi-join on `id in (select …)` would hash-join over a scan of all of them per batch.
    await client!.unsafe(
      `insert into events (id, environment_id, event, data, created_at)
       select 'event_plans_' || lpad(g::text, 20, '0'), $1, 'organization.created', '{}'::jsonb,
              now() - (g % 1728000) * interval '1 second'
       from generate_series(1, 20000) as g`,
      [env.environmentId],
    );
    await client!.unsafe('analyze events');
    const db = drizzle(client!, { schema }) as never;
    const purge = await genericPlanOf(
      () => purgeExpiredEvents(db, new Date(), 5_000),
      (s) => s.startsWith('delete from "events"'),
      true,
    );
    expect(scansOf(purge, 'events').filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
    expect(scansOf(purge, 'events')).toContain('Index Scan events_pkey');
  });
  it('purges sessions long expired through their expiry index, without scanning the table', async () => {
    const db = drizzle(client!, { schema }) as never;
    const purge = await genericPlanOf(
      () => purgeExpiredSessions(db, new Date(), 5_000),
      (s) => s.startsWith('delete from "sessions"'),
    );
    expect(scansOf(purge, 'sessions').filter((scan) => scan.startsWith('Seq Scan'))).toEqual([]);
    expect(scansOf(purge, 'sessions').join(' ')).toContain('sessions_expires_idx');
  });
});
