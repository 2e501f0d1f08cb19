import { organizations } from '@atrium/db';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  type Exec,
  installSeedHelpers,
  seededDomain,
  seededOrganizationId,
  seedOrganizations,
} from '../../../bench/seed.ts';
import { newEnvironment } from '../helpers/world.ts';

/**
 * The benchmark seeds rows with SQL, not through the API; this keeps that SQL honest: the rows
 * must be what the API would have stored (ids, domains, timestamps, the wire shape's output
 * validation), and the ids the harness computes must be the ids the SQL wrote.
 */
describe('benchmark seeding', () => {
  it('seeds organizations the API reads, lists, pages and filters like its own', async () => {
    const env = await newEnvironment();
    // The seed helpers run `$n`-parameterised SQL; here through Drizzle, on either driver.
    const run: Exec = async (text, params = []) => {
      const parts = text.split(/\$(\d+)/);
      const chunks = parts.map((part, i) => (i % 2 === 0 ? sql.raw(part) : sql`${params[Number(part) - 1]}`));
      const result = (await env.deps.db.execute(sql.join(chunks))) as unknown;
      return (Array.isArray(result) ? result : (result as { rows: Record<string, unknown>[] }).rows) ?? [];
    };
    await installSeedHelpers(run);
    await seedOrganizations(run, env.environmentId, 0, 30);

    const stored = await env.deps.db
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.environmentId, env.environmentId));
    expect(stored).toHaveLength(30);

    const read = await env.caller.organizations.get({ id: seededOrganizationId(7) });
    expect(read).toMatchObject({ object: 'organization', name: 'Bench organization 7' });
    expect(read.id).toMatch(/^org_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(read.domains.map((d) => d.domain)).toEqual([seededDomain(7)]);

    const first = await env.caller.organizations.list({ limit: 10 });
    expect(first.data[0]?.id).toBe(seededOrganizationId(30));
    const deep = await env.caller.organizations.list({ limit: 10, after: seededOrganizationId(21) });
    expect(deep.data.map((o) => o.id)).toEqual(Array.from({ length: 10 }, (_, i) => seededOrganizationId(20 - i)));
    expect(deep.list_metadata).toEqual({ before: seededOrganizationId(20), after: seededOrganizationId(11) });

    const filtered = await env.caller.organizations.list({ domains: [seededDomain(12)] });
    expect(filtered.data.map((o) => o.id)).toEqual([seededOrganizationId(12)]);
  });
});
