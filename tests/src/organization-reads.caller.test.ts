import { organizationDomains, organizations } from '@atrium/db';
import { isoOfJson, toOrganization } from '@atrium/routers';
import { asc, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newEnvironment } from './helpers/world.ts';

/**
 * Organization reads come from one JSON array PostgreSQL builds (organizations/service.ts,
 * `organizationJson`), mapped without Drizzle's relational mapping or Dates. They must answer
 * exactly what mapping the stored rows through `toOrganization` answers (the create path's
 * mapping), timestamps of every fraction length included.
 */
describe('organization reads', () => {
  it('answer get, list, external id and filter exactly as the stored rows map, on either driver', async () => {
    const env = await newEnvironment();
    const a = await env.caller.organizations.create({
      name: 'Reads A',
      external_id: 'reads-a',
      metadata: { tier: 'gold', a: 'x' },
      domain_data: [
        { domain: 'reads-a.com', state: 'verified' },
        { domain: 'reads-a2.com', state: 'pending' },
      ],
    });
    const b = await env.caller.organizations.create({ name: 'Reads B', allow_profiles_outside_organization: true });
    // Timestamps with no fraction, one, two and three digits.
    const db = env.deps.db;
    await db.execute(
      sql`update organizations set created_at = '2026-01-02 03:04:05+00', updated_at = '2026-01-02 03:04:05.1+00' where id = ${a.id}`,
    );
    await db.execute(
      sql`update organization_domains set created_at = '2026-01-02 03:04:05.12+00', updated_at = '2026-01-02 03:04:05.123+00' where organization_id = ${a.id}`,
    );
    await db.execute(
      sql`update organizations set billing_customer_id = 'cus_1', created_at = '1999-12-31 23:59:59.999+00' where id = ${b.id}`,
    );

    const expected = async (id: string) => {
      const row = await db.query.organizations.findFirst({
        where: eq(organizations.id, id),
        with: { domains: { orderBy: [asc(organizationDomains.id)] } },
      });
      return toOrganization(row!);
    };
    const [wantA, wantB] = [await expected(a.id), await expected(b.id)];
    expect(wantA.created_at).toBe('2026-01-02T03:04:05.000Z');
    expect(wantA.updated_at).toBe('2026-01-02T03:04:05.100Z');
    expect(wantA.domains.map((d) => [d.created_at, d.updated_at])).toEqual([
      ['2026-01-02T03:04:05.120Z', '2026-01-02T03:04:05.123Z'],
      ['2026-01-02T03:04:05.120Z', '2026-01-02T03:04:05.123Z'],
    ]);
    expect(wantB.created_at).toBe('1999-12-31T23:59:59.999Z');

    expect(await env.caller.organizations.get({ id: a.id })).toStrictEqual(wantA);
    expect(await env.caller.organizations.get({ id: b.id })).toStrictEqual(wantB);
    expect(await env.caller.organizations.getByExternalId({ external_id: 'reads-a' })).toStrictEqual(wantA);
    const page = await env.caller.organizations.list({ limit: 10, order: 'asc' });
    expect(page.data).toStrictEqual([wantA, wantB]);
    expect(page.list_metadata).toEqual({ before: null, after: null });
    const filtered = await env.caller.organizations.list({ domains: ['reads-a2.com'] });
    expect(filtered.data).toStrictEqual([wantA]);
    // Key order too: what the REST facade serialises.
    expect(JSON.stringify(await env.caller.organizations.get({ id: a.id }))).toBe(JSON.stringify(wantA));
  });

  it.each([
    ['2026-11-22T18:49:52+00:00', '2026-11-22T18:49:52.000Z'],
    ['2026-11-22T18:49:52.1+00:00', '2026-11-22T18:49:52.100Z'],
    ['2026-11-22T18:49:52.12+00:00', '2026-11-22T18:49:52.120Z'],
    ['2026-11-22T18:49:52.123+00:00', '2026-11-22T18:49:52.123Z'],
    ['2026-11-22T18:49:52.123999+00:00', '2026-11-22T18:49:52.123Z'],
    ['2026-11-22T20:19:52.5+01:30', '2026-11-22T18:49:52.500Z'],
    ['2026-11-22T13:49:52-05:00', '2026-11-22T18:49:52.000Z'],
  ])('turns the JSON timestamp %s into %s, as a Date would', (text, iso) => {
    expect(isoOfJson(text)).toBe(iso);
    expect(new Date(text).toISOString()).toBe(iso);
  });
});
