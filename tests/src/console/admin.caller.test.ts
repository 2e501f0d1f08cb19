import { events, webhookDeliveries } from '@atrium/db';
import { fanOutEvents } from '@atrium/routers';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { storedEvents } from '../helpers/events.ts';
import { adminCaller } from '../helpers/tokens.ts';
import { newEnvironment, uniqueDomain } from '../helpers/world.ts';

/** The admin procedures the console uses, through a caller: what they answer and what they record. */

describe('admin.domains.verifyManually', () => {
  it('records the reason and the actor admin on organization_domain.verified', async () => {
    const env = await newEnvironment();
    const admin = await adminCaller();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const domain = await admin.domains.create({
      environment: env.environmentId,
      organization_id: org.id,
      domain: uniqueDomain(),
    });
    expect(domain.state).toBe('pending');
    const verified = await admin.domains.verifyManually({
      domain_id: domain.id,
      reason: 'Checked the registrar by phone',
    });
    expect(verified).toMatchObject({ state: 'verified', verification_strategy: 'manual' });
    const stored = (await storedEvents(env)).filter((e) => e.event.startsWith('organization_domain.'));
    expect(stored.map((e) => [e.event, e.actor, e.reason])).toEqual([
      ['organization_domain.created', 'admin', null],
      ['organization_domain.verified', 'admin', 'Checked the registrar by phone'],
    ]);
    const { history } = await admin.domains.get({ domain_id: domain.id });
    expect(history.map((e) => [e.event, e.actor, e.reason])).toEqual([
      ['organization_domain.verified', 'admin', 'Checked the registrar by phone'],
      ['organization_domain.created', 'admin', null],
    ]);
  });

  it.each([
    ['no reason', {}],
    ['an empty reason', { reason: '' }],
    ['a blank reason', { reason: '   ' }],
    ['a reason too long', { reason: 'x'.repeat(501) }],
  ])('refuses %s (422) and leaves the domain pending, with no event', async (_name, extra) => {
    const env = await newEnvironment();
    const admin = await adminCaller();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const domain = await env.caller.organizationDomains.create({ organization_id: org.id, domain: uniqueDomain() });
    const before = (await storedEvents(env)).length;
    await expect(
      admin.domains.verifyManually({ domain_id: domain.id, ...extra } as { domain_id: string; reason: string }),
    ).rejects.toMatchObject({ code: 'UNPROCESSABLE_CONTENT' });
    expect((await env.caller.organizationDomains.get({ id: domain.id })).state).toBe('pending');
    expect((await storedEvents(env)).length).toBe(before);
  });

  it('events made through the API key carry no actor', async () => {
    const env = await newEnvironment();
    await env.caller.organizations.create({ name: 'Acme' });
    expect((await storedEvents(env)).map((e) => e.actor)).toEqual([null]);
  });
});

describe('admin.organizations.search', () => {
  it('finds by a part of the name (any case), the external id, the id and a domain, in the environment only', async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const admin = await adminCaller();
    const domain = uniqueDomain('globex');
    const acme = await admin.organizations.create({
      environment: env.environmentId,
      name: 'Acme Rockets',
      external_id: 'ext-1',
    });
    const globex = await admin.organizations.create({
      environment: env.environmentId,
      name: 'Globex 100%',
      domain_data: [{ domain, state: 'pending' }],
    });
    await admin.organizations.create({ environment: other.environmentId, name: 'Acme elsewhere' });
    const names = async (query: string) =>
      (await admin.organizations.search({ environment: env.environmentId, query })).map((o) => o.name);
    expect(await names('rocket')).toEqual(['Acme Rockets']);
    expect(await names('acme')).toEqual(['Acme Rockets']);
    expect(await names('ext-1')).toEqual(['Acme Rockets']);
    expect(await names(acme.id)).toEqual(['Acme Rockets']);
    expect(await names(domain.toUpperCase())).toEqual(['Globex 100%']);
    expect(await names('100%')).toEqual(['Globex 100%']);
    expect(await names('%')).toEqual(['Globex 100%']);
    expect(await names('nothing')).toEqual([]);
    expect((await names('')).sort()).toEqual(['Acme Rockets', 'Globex 100%']);
    expect(globex.domains).toHaveLength(1);
    expect((await storedEvents(env)).every((e) => e.actor === 'admin')).toBe(true);
  });
});

describe('admin events of environment-level actions', () => {
  it('records API keys, flags, signing-key rotation and webhook endpoints as events with the actor admin, not delivered', async () => {
    const env = await newEnvironment();
    const admin = await adminCaller();
    const key = await admin.apiKeys.create({ environment: env.environmentId });
    const listed = await admin.apiKeys.list({ environment: env.environmentId });
    const id = listed.find((k) => k.key_prefix === key.key_prefix)?.id as string;
    await admin.apiKeys.revoke({ environment: env.environmentId, id });
    await admin.flags.set({ environment: env.environmentId, flag: 'groups', enabled: false });
    const rotated = await admin.signingKeys.rotate({ environment: env.environmentId });
    const endpoint = await admin.webhooks.create({ environment: env.environmentId, url: 'http://127.0.0.1:9/hook' });
    await admin.webhooks.delete({ environment: env.environmentId, id: endpoint.id });
    const stored = await storedEvents(env);
    expect(stored.map((e) => e.event)).toEqual([
      'api_key.created',
      'api_key.revoked',
      'environment.flag_updated',
      'signing_key.rotated',
      'webhook_endpoint.created',
      'webhook_endpoint.deleted',
    ]);
    expect(stored.every((e) => e.actor === 'admin' && e.fanoutPending === false)).toBe(true);
    expect(stored[3]?.data).toMatchObject({ kid: rotated.kid });
    expect(JSON.stringify(stored)).not.toContain(key.api_key);
    expect(JSON.stringify(stored)).not.toContain(endpoint.secret);

    const page = await admin.events.list({ environment: env.environmentId, limit: 10 });
    expect(page.data.map((e) => [e.event, e.actor])[0]).toEqual(['webhook_endpoint.deleted', 'admin']);
  });

  it('records a new environment in the environment itself', async () => {
    const admin = await adminCaller();
    const made = await admin.environments.create({ name: `console-${Date.now()}` });
    const page = await admin.events.list({ environment: made.environment_id });
    expect(page.data.map((e) => [e.event, e.actor])).toEqual([['environment.created', 'admin']]);
    expect(JSON.stringify(page)).not.toContain(made.api_key);
  });
});

describe('admin.webhooks.deliveries and resend', () => {
  it('lists an endpoint’s deliveries and makes one due again now', async () => {
    const env = await newEnvironment();
    const admin = await adminCaller();
    const endpoint = await admin.webhooks.create({ environment: env.environmentId, url: 'http://127.0.0.1:9/hook' });
    await env.caller.organizations.create({ name: 'Acme' });
    await fanOutEvents(env.deps.db, new Date(), 10, { perEnvironment: 10, environments: [env.environmentId] });
    const log = await admin.webhooks.deliveries({ environment: env.environmentId, id: endpoint.id });
    expect(log.map((d) => [d.event, d.status])).toEqual([['organization.created', 'pending']]);
    const delivery = log[0] as (typeof log)[number];
    await env.deps.db
      .update(webhookDeliveries)
      .set({ status: 'failed', nextAttemptAt: null })
      .where(eq(webhookDeliveries.id, delivery.id));

    const resent = await admin.webhooks.resend({ environment: env.environmentId, delivery_id: delivery.id });
    expect(resent.status).toBe('pending');
    const [row] = await env.deps.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, delivery.id));
    expect(row?.status).toBe('pending');
    expect(Math.abs((row?.nextAttemptAt?.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);
    const resentEvents = await env.deps.db
      .select()
      .from(events)
      .where(and(eq(events.environmentId, env.environmentId), eq(events.event, 'webhook_delivery.resent')));
    expect(resentEvents.map((e) => [e.actor, e.data.id])).toEqual([['admin', delivery.id]]);
  });

  it('answers 404 for a delivery or endpoint of another environment, and changes nothing', async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const admin = await adminCaller();
    const endpoint = await admin.webhooks.create({ environment: env.environmentId, url: 'http://127.0.0.1:9/hook' });
    await env.caller.organizations.create({ name: 'Acme' });
    await fanOutEvents(env.deps.db, new Date(), 10, { perEnvironment: 10, environments: [env.environmentId] });
    const [delivery] = await admin.webhooks.deliveries({ environment: env.environmentId, id: endpoint.id });
    await expect(
      admin.webhooks.resend({ environment: other.environmentId, delivery_id: delivery?.id as string }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(
      admin.webhooks.deliveries({ environment: other.environmentId, id: endpoint.id }),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});

describe('admin users, memberships, invitations and connections', () => {
  it('create and list through the same services as the API, recorded with the actor admin', async () => {
    const env = await newEnvironment();
    const admin = await adminCaller();
    const environment = env.environmentId;
    const org = await admin.organizations.create({ environment, name: 'Acme' });
    const user = await admin.users.create({ environment, email: `ada-${Date.now()}@example.org` });
    await admin.memberships.create({ environment, user_id: user.id, organization_id: org.id, role_slug: 'admin' });
    const members = await admin.memberships.list({ environment, organization_id: org.id });
    expect(members.data.map((m) => [m.user_id, m.role.slug])).toEqual([[user.id, 'admin']]);
    expect((await admin.users.list({ environment })).data.map((u) => u.id)).toEqual([user.id]);
    const invitation = await admin.invitations.send({
      environment,
      email: 'grace@example.org',
      organization_id: org.id,
    });
    await admin.invitations.revoke({ environment, id: invitation.id });
    expect((await admin.invitations.list({ environment })).data.map((i) => i.state)).toEqual(['revoked']);
    const connection = await admin.connections.create({
      environment,
      organization_id: org.id,
      connection_type: 'GenericSAML',
      name: 'Okta',
    });
    expect((await admin.connections.list({ environment })).data.map((c) => c.id)).toEqual([connection.id]);
    await admin.connections.delete({ connection_id: connection.id });
    expect((await admin.connections.list({ environment })).data).toEqual([]);
    const stored = await storedEvents(env);
    expect(stored.length).toBeGreaterThan(3);
    expect(stored.filter((e) => e.actor !== 'admin').map((e) => e.event)).toEqual([]);
  });
});
