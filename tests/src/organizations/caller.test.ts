import { organizationDomains } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { storedCounts } from '../helpers/store.ts';
import { newEnvironment, uniqueDomain } from '../helpers/world.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('organizations (caller)', () => {
  it('creates an organization with domains, external id and metadata', async () => {
    const env = await newEnvironment();
    const pending = uniqueDomain();
    const verified = uniqueDomain();
    const org = await env.caller.organizations.create({
      name: 'Acme',
      external_id: 'acme-1',
      metadata: { tier: 'gold' },
      domain_data: [
        { domain: pending.toUpperCase(), state: 'pending' },
        { domain: verified, state: 'verified' },
      ],
    });
    expect(org).toMatchObject({
      object: 'organization',
      name: 'Acme',
      external_id: 'acme-1',
      metadata: { tier: 'gold' },
      billing_customer_id: null,
      allow_profiles_outside_organization: false,
    });
    expect(org.id).toMatch(/^org_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(org.created_at).toMatch(ISO_MS);
    expect(org.domains.map((d) => [d.domain, d.state, d.verification_strategy])).toEqual([
      [pending, 'pending', 'dns'],
      [verified, 'verified', 'manual'],
    ]);
    for (const domain of org.domains) {
      expect(domain.id).toMatch(/^org_domain_/);
      expect(domain.organization_id).toBe(org.id);
      expect(domain.verification_token.length).toBeGreaterThanOrEqual(24);
      expect(domain.verification_prefix).toMatch(/^atrium-domain-verification-/);
    }
    expect(await env.caller.organizations.get({ id: org.id })).toEqual(org);
    expect(await env.caller.organizations.getByExternalId({ external_id: 'acme-1' })).toEqual(org);
  });

  it('updates only the supplied fields, and domain_data adds domains', async () => {
    const env = await newEnvironment();
    const first = uniqueDomain();
    const org = await env.caller.organizations.create({
      name: 'Acme',
      external_id: 'x-1',
      metadata: { a: '1' },
      domain_data: [{ domain: first, state: 'pending' }],
    });
    const renamed = await env.caller.organizations.update({ id: org.id, name: 'Acme Inc' });
    expect(renamed).toMatchObject({ name: 'Acme Inc', external_id: 'x-1', metadata: { a: '1' } });
    expect(renamed.domains).toHaveLength(1);
    expect(Date.parse(renamed.updated_at)).toBeGreaterThanOrEqual(Date.parse(org.updated_at));

    const second = uniqueDomain();
    const updated = await env.caller.organizations.update({
      id: org.id,
      allow_profiles_outside_organization: true,
      billing_customer_id: 'cus_123',
      metadata: { a: null, b: '2' },
      domain_data: [
        { domain: first, state: 'verified' },
        { domain: second, state: 'pending' },
      ],
    });
    expect(updated).toMatchObject({
      name: 'Acme Inc',
      allow_profiles_outside_organization: true,
      billing_customer_id: 'cus_123',
      metadata: { b: '2' },
      external_id: 'x-1',
    });
    expect(updated.domains.map((d) => [d.domain, d.state])).toEqual([
      [first, 'verified'],
      [second, 'pending'],
    ]);
    const cleared = await env.caller.organizations.update({ id: org.id, external_id: null });
    expect(cleared.external_id).toBeNull();
  });

  it('deletes an organization with its domains in one go', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({
      name: 'Gone',
      domain_data: [{ domain: uniqueDomain(), state: 'pending' }],
    });
    await env.caller.organizations.delete({ id: org.id });
    await expect(env.caller.organizations.get({ id: org.id })).rejects.toMatchObject({ status: 404 });
    const left = await env.deps.db
      .select()
      .from(organizationDomains)
      .where(eq(organizationDomains.organizationId, org.id));
    expect(left).toEqual([]);
    await expect(env.caller.organizations.delete({ id: org.id })).rejects.toMatchObject({
      status: 404,
      apiCode: 'entity_not_found',
    });
  });

  it('refuses a taken external id with 409 and stores nothing', async () => {
    const env = await newEnvironment();
    await env.caller.organizations.create({ name: 'One', external_id: 'dup' });
    const before = await storedCounts(env);
    await expect(env.caller.organizations.create({ name: 'Two', external_id: 'dup' })).rejects.toMatchObject({
      status: 409,
      apiCode: 'external_id_already_used',
    });
    expect(await storedCounts(env)).toEqual(before);
  });

  it('lets several organizations claim a pending domain, and one verified claim fails the others', async () => {
    const env = await newEnvironment();
    const domain = uniqueDomain();
    const a = await env.caller.organizations.create({ name: 'A', domain_data: [{ domain, state: 'pending' }] });
    const b = await env.caller.organizations.create({ name: 'B', domain_data: [{ domain, state: 'pending' }] });
    const c = await env.caller.organizations.create({ name: 'C', domain_data: [{ domain, state: 'verified' }] });
    expect(c.domains[0]?.state).toBe('verified');
    for (const org of [a, b]) {
      const [claim] = (await env.caller.organizations.get({ id: org.id })).domains;
      expect(claim).toMatchObject({
        state: 'failed',
        verification_failed_reason: 'domain_verified_by_other_organization',
      });
    }
    // No other organization can claim a domain another holds verified, pending or verified,
    // and the refused create stores nothing.
    const before = await storedCounts(env);
    for (const state of ['pending', 'verified'] as const) {
      await expect(
        env.caller.organizations.create({ name: 'D', domain_data: [{ domain, state }] }),
      ).rejects.toMatchObject({ status: 409, apiCode: 'domain_verified_by_other_organization' });
    }
    expect(await storedCounts(env)).toEqual(before);
  });

  it('refuses consumer and malformed domains in domain_data, listing every bad entry, storing nothing', async () => {
    const env = await newEnvironment();
    const error = await env.caller.organizations
      .create({
        name: 'Bad',
        domain_data: [
          { domain: 'gmail.com', state: 'pending' },
          { domain: uniqueDomain(), state: 'pending' },
          { domain: 'co.uk', state: 'pending' },
        ],
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 422, apiCode: 'invalid_request_parameters' });
    expect((error as { errors: { field: string; code: string }[] }).errors).toEqual([
      expect.objectContaining({ field: 'domain_data.0.domain', code: 'consumer_domain' }),
      expect.objectContaining({ field: 'domain_data.2.domain', code: 'invalid_domain' }),
    ]);
    expect(await storedCounts(env)).toEqual({ organizations: 0, domains: 0, events: 0 });
  });
});

describe('organization domains (caller)', () => {
  it('creates, reads, verifies and deletes a domain', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const domain = uniqueDomain();
    const created = await env.caller.organizationDomains.create({
      organization_id: org.id,
      domain: ` ${domain.toUpperCase()} `,
    });
    expect(created).toMatchObject({
      object: 'organization_domain',
      organization_id: org.id,
      domain,
      state: 'pending',
      verification_strategy: 'dns',
      verification_failed_reason: null,
    });
    expect(await env.caller.organizationDomains.get({ id: created.id })).toEqual(created);

    const verifying = await env.caller.organizationDomains.verify({ id: created.id });
    expect(verifying.state).toBe('pending');
    const [row] = await env.deps.db.select().from(organizationDomains).where(eq(organizationDomains.id, created.id));
    expect(row?.nextCheckAt).toBeInstanceOf(Date);

    await env.caller.organizationDomains.delete({ id: created.id });
    await expect(env.caller.organizationDomains.get({ id: created.id })).rejects.toMatchObject({ status: 404 });
    expect((await env.caller.organizations.get({ id: org.id })).domains).toEqual([]);
  });

  it('answers 409 for a domain the organization already holds, and 400 when verifying a verified domain', async () => {
    const env = await newEnvironment();
    const domain = uniqueDomain();
    const org = await env.caller.organizations.create({ name: 'Acme', domain_data: [{ domain, state: 'verified' }] });
    await expect(env.caller.organizationDomains.create({ organization_id: org.id, domain })).rejects.toMatchObject({
      status: 409,
      apiCode: 'domain_already_exists',
    });
    await expect(env.caller.organizationDomains.verify({ id: org.domains[0]!.id })).rejects.toMatchObject({
      status: 400,
      apiCode: 'domain_already_verified',
    });
    const other = await env.caller.organizations.create({ name: 'Other' });
    await expect(env.caller.organizationDomains.create({ organization_id: other.id, domain })).rejects.toMatchObject({
      status: 409,
      apiCode: 'domain_verified_by_other_organization',
    });
  });

  it("answers 404 for a domain on an unknown organization or another environment's, storing nothing", async () => {
    const env = await newEnvironment();
    const elsewhere = await newEnvironment();
    const before = await storedCounts(elsewhere);
    const foreign = await elsewhere.caller.organizations.create({ name: 'Foreign' });
    for (const organization_id of ['org_01HZZZZZZZZZZZZZZZZZZZZZZZ', foreign.id]) {
      await expect(
        env.caller.organizationDomains.create({ organization_id, domain: uniqueDomain() }),
      ).rejects.toMatchObject({ status: 404, apiCode: 'entity_not_found' });
    }
    expect(await storedCounts(env)).toEqual({ organizations: 0, domains: 0, events: 0 });
    expect(await storedCounts(elsewhere)).toEqual({ ...before, organizations: 1, events: before.events + 1 });
  });

  it('restarts verification of a failed claim', async () => {
    const env = await newEnvironment();
    const domain = uniqueDomain();
    const loser = await env.caller.organizations.create({ name: 'L', domain_data: [{ domain, state: 'pending' }] });
    const winner = await env.caller.organizations.create({ name: 'W', domain_data: [{ domain, state: 'verified' }] });
    const claim = (await env.caller.organizations.get({ id: loser.id })).domains[0]!;
    expect(claim.state).toBe('failed');
    // While another organization holds it verified, a restart is refused.
    await expect(env.caller.organizationDomains.verify({ id: claim.id })).rejects.toMatchObject({ status: 409 });
    await env.caller.organizationDomains.delete({ id: winner.domains[0]!.id });
    const restarted = await env.caller.organizationDomains.verify({ id: claim.id });
    expect(restarted).toMatchObject({ state: 'pending', verification_failed_reason: null });
  });

  it('refuses a domain for an unknown organization and stores nothing', async () => {
    const env = await newEnvironment();
    await expect(
      env.caller.organizationDomains.create({
        organization_id: 'org_01HXXXXXXXXXXXXXXXXXXXXXXX',
        domain: uniqueDomain(),
      }),
    ).rejects.toMatchObject({ status: 404, apiCode: 'entity_not_found' });
    expect(await storedCounts(env)).toEqual({ organizations: 0, domains: 0, events: 0 });
  });
});
