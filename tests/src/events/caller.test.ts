import { events, newId } from '@atrium/db';
import { EVENT_RETENTION_MS, purgeExpiredEvents } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { eventNamesSince, storedEvents } from '../helpers/events.ts';
import { failure } from '../helpers/people.ts';
import { newEnvironment, uniqueDomain } from '../helpers/world.ts';

describe('events of organization and domain writes', () => {
  it('appends exactly one event of the right name per write, with the resource as the API shows it', async () => {
    const env = await newEnvironment();
    const c = env.caller;
    let seen = 0;
    const next = async () => {
      const names = await eventNamesSince(env, seen);
      seen += names.length;
      return names;
    };

    const org = await c.organizations.create({ name: 'Acme' });
    expect(await next()).toEqual(['organization.created']);
    const updated = await c.organizations.update({ id: org.id, name: 'Acme Inc' });
    expect(await next()).toEqual(['organization.updated']);
    const domain = await c.organizationDomains.create({ organization_id: org.id, domain: uniqueDomain() });
    expect(await next()).toEqual(['organization_domain.created']);
    await c.organizationDomains.verify({ id: domain.id });
    expect(await next()).toEqual(['organization_domain.updated']);
    await c.organizationDomains.delete({ id: domain.id });
    expect(await next()).toEqual(['organization_domain.deleted']);
    await c.organizations.delete({ id: org.id });
    expect(await next()).toEqual(['organization.deleted']);

    const all = await storedEvents(env);
    expect(all[0]?.data).toEqual(org);
    expect(all[1]?.data).toEqual(updated);
    expect(all[2]?.data).toEqual(domain);
    expect(all[2]?.organizationId).toBe(org.id);
    expect(all[5]?.data).toMatchObject({ object: 'organization', id: org.id, name: 'Acme Inc' });
  });

  it('emits domain events for domain_data, including verified claims and the claims they defeat', async () => {
    const env = await newEnvironment();
    const name = uniqueDomain();
    const squatter = await env.caller.organizations.create({
      name: 'Squatter',
      domain_data: [{ domain: name, state: 'pending' }],
    });
    const before = (await storedEvents(env)).length;
    await env.caller.organizations.create({ name: 'Owner', domain_data: [{ domain: name, state: 'verified' }] });
    expect(await eventNamesSince(env, before)).toEqual([
      'organization_domain.created',
      'organization_domain.verified',
      'organization_domain.verification_failed',
      'organization.created',
    ]);
    const failed = (await storedEvents(env)).at(-2);
    expect(failed?.data).toMatchObject({
      reason: 'domain_verified_by_other_organization',
      organization_domain: { id: squatter.domains[0]?.id, state: 'failed' },
    });
  });

  it.each([
    [
      'a consumer domain',
      (orgId: string) => ({ organization_id: orgId, domain: 'gmail.com' }),
      { status: 422, code: 'consumer_domain' },
    ],
    [
      'an unknown organization',
      (_orgId: string) => ({ organization_id: 'org_01JUNKNOWN0000000000000000', domain: uniqueDomain() }),
      { status: 404, code: 'entity_not_found' },
    ],
  ])('appends nothing when a write fails (%s)', async (_label, input, refusal) => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const before = (await storedEvents(env)).length;
    expect(await failure(env.caller.organizationDomains.create(input(org.id)))).toEqual(refusal);
    expect((await storedEvents(env)).length).toBe(before);
    expect((await env.caller.organizations.get({ id: org.id })).domains).toEqual([]);
  });

  it('appends nothing when a transaction fails after it recorded events (rolled back with the write)', async () => {
    const env = await newEnvironment();
    const taken = uniqueDomain();
    await env.caller.organizations.create({ name: 'Owner', domain_data: [{ domain: taken, state: 'verified' }] });
    const before = (await storedEvents(env)).length;
    // The first entry is claimed (and its event recorded) before the second one is refused.
    await expect(
      env.caller.organizations.create({
        name: 'Late',
        domain_data: [
          { domain: uniqueDomain(), state: 'pending' },
          { domain: taken, state: 'verified' },
        ],
      }),
    ).rejects.toMatchObject({ status: 409 });
    expect((await storedEvents(env)).length).toBe(before);
    const list = await env.caller.organizations.list({ limit: 10, order: 'desc' });
    expect(list.data.map((o) => o.name)).toEqual(['Owner']);
  });
});

describe('event retention', () => {
  it('keeps 30 days: older events are never listed and are purged', async () => {
    const env = await newEnvironment();
    await env.caller.organizations.create({ name: 'Recent' });
    const old = newId('event');
    await env.deps.db.insert(events).values({
      id: old,
      environmentId: env.environmentId,
      event: 'organization.created',
      data: { object: 'organization', id: 'org_old' },
      createdAt: new Date(Date.now() - EVENT_RETENTION_MS - 60_000),
    });
    const listed = await env.caller.events.list({ limit: 10, order: 'desc' });
    expect(listed.data.map((e) => e.id)).not.toContain(old);
    expect(listed.data).toHaveLength(1);

    expect(await purgeExpiredEvents(env.deps.db, new Date(), 1)).toBeGreaterThanOrEqual(1);
    expect(await env.deps.db.select().from(events).where(eq(events.id, old))).toEqual([]);
    expect(await storedEvents(env)).toHaveLength(1);
  });
});
