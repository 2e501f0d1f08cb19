import { organizations } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { storedEvents } from '../helpers/events.ts';
import { newEnvironment, uniqueDomain } from '../helpers/world.ts';

/**
 * Create organization writes the organization, its `domain_data` claims, the claims it defeats
 * and every event in one statement: what it answers and records must be what the stored rows
 * read as, and a refusal must store nothing.
 */
describe('create organization with domain_data', () => {
  // The worker's database is built by the first environment: under the hook's longer timeout.
  beforeAll(async () => {
    await newEnvironment();
  });

  it('answers, stores and records exactly what the reads show, defeating competing claims', async () => {
    const env = await newEnvironment();
    const [pending, contested] = [uniqueDomain(), uniqueDomain()];
    const rival = await env.caller.organizations.create({
      name: 'Rival',
      domain_data: [{ domain: contested, state: 'pending' }],
    });
    const before = (await storedEvents(env)).length;

    const created = await env.caller.organizations.create({
      name: 'Owner',
      metadata: { tier: 'gold', a: '1' },
      domain_data: [
        { domain: pending, state: 'pending' },
        { domain: contested, state: 'verified' },
      ],
    });
    expect(created).toEqual(await env.caller.organizations.get({ id: created.id }));
    expect(created.domains.map((d) => [d.domain, d.state, d.verification_strategy])).toEqual([
      [pending, 'pending', 'dns'],
      [contested, 'verified', 'manual'],
    ]);
    const [stored] = await env.deps.db
      .select({ domainCount: organizations.domainCount })
      .from(organizations)
      .where(eq(organizations.id, created.id));
    expect(stored?.domainCount).toBe(2);

    const defeated = await env.caller.organizationDomains.get({ id: rival.domains[0]!.id });
    expect(defeated).toMatchObject({
      state: 'failed',
      verification_failed_reason: 'domain_verified_by_other_organization',
    });
    const recorded = (await storedEvents(env)).slice(before);
    expect(recorded.map((e) => [e.event, e.organizationId])).toEqual([
      ['organization_domain.created', created.id],
      ['organization_domain.created', created.id],
      ['organization_domain.verified', created.id],
      ['organization_domain.verification_failed', rival.id],
      ['organization.created', created.id],
    ]);
    expect(recorded.map((e) => e.data)).toEqual([
      created.domains[0],
      created.domains[1],
      created.domains[1],
      { reason: 'domain_verified_by_other_organization', organization_domain: defeated },
      created,
    ]);
  });

  it('refuses a domain verified by another organization with 409, storing and recording nothing', async () => {
    const env = await newEnvironment();
    const taken = uniqueDomain();
    await env.caller.organizations.create({ name: 'Holder', domain_data: [{ domain: taken, state: 'verified' }] });
    const before = await storedEvents(env);
    const listed = await env.caller.organizations.list({});
    for (const state of ['pending', 'verified'] as const) {
      await expect(
        env.caller.organizations.create({
          name: 'Late',
          domain_data: [
            { domain: uniqueDomain(), state: 'pending' },
            { domain: taken, state },
          ],
        }),
      ).rejects.toMatchObject({
        status: 409,
        apiCode: 'domain_verified_by_other_organization',
        message: `The domain '${taken}' is verified by another organization.`,
      });
    }
    expect(await storedEvents(env)).toEqual(before);
    expect(await env.caller.organizations.list({})).toEqual(listed);
  });
});
