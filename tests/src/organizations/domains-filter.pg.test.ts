import { schema } from '@atrium/db';
import { createCaller, createInnerContext } from '@atrium/routers';
import { drizzle } from 'drizzle-orm/postgres-js';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  type Exec,
  installSeedHelpers,
  SHARED_BY,
  seededOrganizationId,
  seedOrganizations,
  sharedDomain,
} from '../../../bench/seed.ts';
import { literal, type PlanNode, planNodes, recordingClient, type Sent } from '../helpers/plans.ts';
import { newEnvironment } from '../helpers/world.ts';

const databaseUrl = inject('databaseUrl');

type Node = PlanNode & {
  'Index Cond'?: string;
  'Recheck Cond'?: string;
  'Actual Rows'?: number;
  'Rows Removed by Filter'?: number;
};

/**
 * `GET /organizations?domains=…` where real tenants share domains (five organizations per
 * domain): the generic plan of the prepared statement must find the organizations from the
 * domain index, not walk every organization of the environment in id order and filter them.
 */
describe.skipIf(!databaseUrl)('the domains filter (PostgreSQL only)', () => {
  const sent: Sent[] = [];
  const client = databaseUrl ? recordingClient(databaseUrl, sent) : undefined;
  afterAll(async () => {
    await client?.end({ timeout: 5 });
  });

  /** The executed generic plan (EXPLAIN ANALYZE) of the statement `run` sends for the list. */
  async function executedPlanOf(run: () => Promise<unknown>): Promise<Node[]> {
    sent.length = 0;
    await run();
    const list = sent.find((s) => s.sql.includes('from "organizations"') && s.sql.includes('limit $'));
    expect(list).toBeDefined();
    const name = `domains_probe_${Math.random().toString(36).slice(2)}`;
    return client!.begin(async (tx) => {
      await tx.unsafe(`prepare ${name} as ${list!.sql}`);
      const args = list!.params.map(literal).join(', ');
      const explained = await tx.unsafe(`explain (analyze, format json) execute ${name}(${args})`);
      await tx.unsafe(`deallocate ${name}`);
      return planNodes(explained) as Node[];
    });
  }

  it('reads the matching organizations by key at 20,000 organizations, on every page', async () => {
    const env = await newEnvironment();
    const db = drizzle(client!, { schema });
    const caller = createCaller(createInnerContext({ ...env.deps, db: db as never }, `Bearer ${env.apiKey}`));
    const exec: Exec = (text, params = []) => client!.unsafe(text, params as never[]) as never;
    await installSeedHelpers(exec);
    const base = 80_000_000;
    await seedOrganizations(exec, env.environmentId, base, base + 20_000, true);
    await client!.unsafe('analyze organizations, organization_domains');

    const n = base + 10_001; // the first of five organizations holding this domain
    const owners = Array.from({ length: SHARED_BY }, (_, i) => seededOrganizationId(n + i));
    const first = await caller.organizations.list({ domains: [sharedDomain(n)], limit: 2 });
    expect(first.data.map((o) => o.id)).toEqual([owners[4], owners[3]]);

    for (const input of [
      { domains: [sharedDomain(n)] },
      { domains: [sharedDomain(n)], limit: 2, after: owners[3] },
      { domains: [sharedDomain(n), sharedDomain(base + 1)], order: 'asc' as const, before: owners[2] },
    ]) {
      const plan = await executedPlanOf(() => caller.organizations.list(input));
      // Every read of organizations is by the ids the domain index gave (an index scan, or a
      // bitmap scan of the primary key), and reads no organization it then throws away.
      const reads = plan.filter(
        (node) => node['Relation Name'] === 'organizations' || node['Index Name']?.startsWith('organizations'),
      );
      expect(reads.length).toBeGreaterThan(0);
      for (const node of reads) {
        expect(['Index Scan', 'Index Only Scan', 'Bitmap Heap Scan', 'Bitmap Index Scan']).toContain(node['Node Type']);
        expect(node['Index Cond'] ?? node['Recheck Cond']).toMatch(/\bid = ANY\b/);
        expect(node['Rows Removed by Filter'] ?? 0).toBeLessThanOrEqual(SHARED_BY);
        expect(node['Actual Rows'] ?? 0).toBeLessThanOrEqual(2 * SHARED_BY);
      }
      const domainScans = plan.filter((node) => node['Relation Name'] === 'organization_domains');
      expect(domainScans.map((s) => s['Index Name'])).toContain('organization_domains_environment_domain_idx');
    }

    // Create organization's one statement checks its claims against the same index, with or
    // without domain data: no scan of the environment's domains or organizations either.
    // Without domain data the statement has no claims' parts at all.
    for (const domain_data of [[], [{ domain: `planned-${Date.now()}.com`, state: 'verified' as const }]]) {
      sent.length = 0;
      await caller.organizations.create({ name: 'Planned', domain_data });
      const create = sent.find((s) => s.sql.includes('insert into "organizations"'));
      expect(create).toBeDefined();
      expect(create!.sql.includes('jsonb_to_recordset')).toBe(domain_data.length > 0);
      expect(create!.sql.includes('"organization_domains"')).toBe(domain_data.length > 0);
      const name = `create_probe_${Math.random().toString(36).slice(2)}`;
      // EXPLAIN without ANALYZE plans the statement without running it.
      const plan = await client!.begin(async (tx) => {
        await tx.unsafe(`prepare ${name} as ${create!.sql}`);
        const args = create!.params.map(literal).join(', ');
        const explained = await tx.unsafe(`explain (format json) execute ${name}(${args})`);
        await tx.unsafe(`deallocate ${name}`);
        return planNodes(explained) as Node[];
      });
      const scans = plan.filter((node) => node['Node Type'].includes('Seq Scan'));
      expect(scans.map((node) => node['Relation Name'])).toEqual([]);
    }
  });
});
