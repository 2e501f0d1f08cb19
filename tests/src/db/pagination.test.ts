import { organizations } from '@atrium/db';
import { and, desc, eq, lt, sql } from 'drizzle-orm';
import { describe, expect, inject, it } from 'vitest';
import { planNodes } from '../helpers/plans.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

async function seed(env: TestEnvironment, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await env.caller.organizations.create({ name: `Org ${i}` })).id);
  return ids;
}

/** Walks every page with `after` and returns the ids in the order seen. */
async function walk(env: TestEnvironment, order: 'asc' | 'desc', limit: number): Promise<string[]> {
  const seen: string[] = [];
  let after: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const page = await env.http.get(`/organizations?limit=${limit}&order=${order}${after ? `&after=${after}` : ''}`);
    expect(page.status).toBe(200);
    seen.push(...page.body.data.map((o: { id: string }) => o.id));
    after = page.body.list_metadata.after ?? undefined;
    if (!after) return seen;
  }
  throw new Error('pagination did not end');
}

describe('keyset pagination', () => {
  it('visits every item exactly once in both orders, and before returns the preceding page', async () => {
    const env = await newEnvironment();
    const ids = await seed(env, 23);
    expect(await walk(env, 'asc', 5)).toEqual(ids);
    expect(await walk(env, 'desc', 4)).toEqual([...ids].reverse());
    expect(await walk(env, 'desc', 100)).toEqual([...ids].reverse());

    const first = (await env.http.get('/organizations?limit=5&order=asc')).body;
    expect(first.list_metadata).toEqual({ before: null, after: ids[4] });
    const second = (await env.http.get(`/organizations?limit=5&order=asc&after=${ids[4]}`)).body;
    expect(second.data.map((o: { id: string }) => o.id)).toEqual(ids.slice(5, 10));
    expect(second.list_metadata).toEqual({ before: ids[5], after: ids[9] });
    const back = (await env.http.get(`/organizations?limit=5&order=asc&before=${ids[5]}`)).body;
    expect(back.data.map((o: { id: string }) => o.id)).toEqual(ids.slice(0, 5));
    expect(back.list_metadata).toEqual({ before: null, after: ids[4] });
    const last = (await env.http.get(`/organizations?limit=5&order=asc&after=${ids[19]}`)).body;
    expect(last.data.map((o: { id: string }) => o.id)).toEqual(ids.slice(20));
    expect(last.list_metadata).toEqual({ before: ids[20], after: null });
    const descBack = (await env.http.get(`/organizations?limit=3&before=${ids[10]}`)).body;
    expect(descBack.data.map((o: { id: string }) => o.id)).toEqual([ids[13], ids[12], ids[11]]);
    expect(descBack.list_metadata).toEqual({ before: ids[13], after: ids[11] });
  });

  it('keeps working when the cursor object has been deleted', async () => {
    const env = await newEnvironment();
    const ids = await seed(env, 6);
    await env.caller.organizations.delete({ id: ids[2]! });
    const page = await env.caller.organizations.list({ limit: 2, order: 'asc', after: ids[2] });
    expect(page.data.map((o) => o.id)).toEqual([ids[3], ids[4]]);
    expect(page.list_metadata).toEqual({ before: ids[3], after: ids[4] });
    const before = await env.caller.organizations.list({ limit: 10, order: 'asc', before: ids[2] });
    expect(before.data.map((o) => o.id)).toEqual([ids[0], ids[1]]);
    expect(before.list_metadata).toEqual({ before: null, after: ids[1] });
  });

  it('refuses before and after together', async () => {
    const env = await newEnvironment();
    const res = await env.http.get('/organizations?before=org_a&after=org_b');
    expect(res.status).toBe(422);
  });

  it.skipIf(!inject('databaseUrl'))(
    'serves a page at 100,000 rows from the index, without a sequential scan (PostgreSQL plan)',
    async () => {
      const env = await newEnvironment();
      const db = env.deps.db;
      // Set-based seed: ids sort like ULIDs (fixed-width, increasing).
      await db.execute(sql`
        insert into organizations (id, environment_id, name)
        select 'org_' || lpad(g::text, 26, '0'), ${env.environmentId}, 'Seeded ' || g
        from generate_series(1, 100000) as g`);
      await db.execute(sql`analyze organizations`);
      const cursor = `org_${String(50_000).padStart(26, '0')}`;
      // A deep page's keyset shape (the environment, id below the cursor, by id, limit + 1) with
      // its values inlined: that the indexes serve it at this size. The statements the list
      // service itself sends are held to their plans in generic-plans.pg.test.ts.
      const query = db.query.organizations
        .findMany({
          where: and(eq(organizations.environmentId, env.environmentId), lt(organizations.id, cursor)),
          orderBy: [desc(organizations.id)],
          limit: 11,
          with: { domains: true },
        })
        .toSQL();
      const literal = (value: unknown) =>
        typeof value === 'number' ? String(value) : `'${String(value).replace(/'/g, "''")}'`;
      const inlined = query.sql.replace(/\$(\d+)/g, (_, n: string) => literal(query.params[Number(n) - 1]));
      const nodes = planNodes(await db.execute(sql.raw(`explain (format json) ${inlined}`)));
      // The organizations table must be read through an index, in index order (no Sort), and
      // never by a sequential scan.
      const onOrganizations = nodes.filter((n) => n['Relation Name'] === 'organizations');
      expect(onOrganizations.map((n) => n['Node Type'])).toEqual(['Index Scan']);
      expect(['organizations_environment_id_idx', 'organizations_pkey']).toContain(onOrganizations[0]?.['Index Name']);
      expect(
        nodes.some(
          (n) => n['Node Type'] === 'Sort' || (n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'organizations'),
        ),
      ).toBe(false);
      const page = await env.caller.organizations.list({ limit: 10, order: 'desc', after: cursor });
      expect(page.data[0]?.id).toBe(`org_${String(49_999).padStart(26, '0')}`);
      expect(page.data).toHaveLength(10);
    },
    120_000,
  );
});
