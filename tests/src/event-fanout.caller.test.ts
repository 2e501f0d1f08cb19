import { events, organizationDomains, organizations, webhookDeliveries, webhookEndpoints } from '@atrium/db';
import { DELIVERIES_PER_STATEMENT } from '@atrium/routers';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newEnvironment, type TestEnvironment, uniqueDomain } from './helpers/world.ts';

/**
 * An event and its webhook deliveries are written by the statement of the change (create
 * organization: one autocommit statement), with DELIVERIES_PER_STATEMENT delivery ids made in
 * advance; more subscribed endpoints take the transactional path or a second statement. Either
 * way every enabled, subscribed endpoint gets exactly one delivery per event.
 */
async function endpoints(env: TestEnvironment, count: number, subscribed: string[] = ['*']) {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await env.http.post('/webhook_endpoints', {
      endpoint_url: `https://hooks.example.com/${i}`,
      events: subscribed,
    });
    expect(res.status).toBe(201);
    ids.push(res.body.id as string);
  }
  return ids;
}

async function deliveriesOfEvent(env: TestEnvironment, name: string) {
  const [event] = await env.deps.db
    .select()
    .from(events)
    .where(and(eq(events.environmentId, env.environmentId), eq(events.event, name)));
  expect(event).toBeDefined();
  const rows = await env.deps.db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.eventId, event?.id as string));
  return rows;
}

describe('webhook fan-out of an event', () => {
  it.each([
    ['none', 0],
    ['a few', 3],
    ['exactly as many as one statement queues', DELIVERIES_PER_STATEMENT],
    ['more than one statement queues', DELIVERIES_PER_STATEMENT + 3],
  ])('queues one delivery per subscribed endpoint with %s endpoints (%i)', async (_label, count) => {
    const env = await newEnvironment();
    const ids = await endpoints(env, count);
    // An endpoint that wants other events, and a disabled one, get nothing.
    const [other] = await endpoints(env, 1, ['user.created']);
    const [disabled] = await endpoints(env, 1);
    await env.deps.db
      .update(webhookEndpoints)
      .set({ status: 'disabled' })
      .where(eq(webhookEndpoints.id, disabled as string));

    const org = await env.caller.organizations.create({ name: 'Fan-out' });
    const domain = await env.caller.organizationDomains.create({ organization_id: org.id, domain: uniqueDomain() });

    for (const name of ['organization.created', 'organization_domain.created']) {
      const rows = await deliveriesOfEvent(env, name);
      expect(rows.map((r) => r.endpointId).sort()).toEqual([...ids].sort());
      expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
      for (const row of rows) {
        expect(row.id).toMatch(/^wd_[0-9A-HJKMNP-TV-Z]{26}$/);
        expect(row.status).toBe('pending');
      }
      expect(rows.some((r) => r.endpointId === other || r.endpointId === disabled)).toBe(false);
    }
    const created = await env.deps.db
      .select()
      .from(events)
      .where(and(eq(events.environmentId, env.environmentId), eq(events.event, 'organization.created')));
    expect(created).toHaveLength(1);
    // Past one statement's share the single-statement create wrote nothing and the transaction
    // wrote it once.
    const stored = await env.deps.db
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.environmentId, env.environmentId));
    expect(stored).toEqual([{ id: org.id }]);
    expect(created[0]?.data).toEqual(org);
    expect(created[0]?.organizationId).toBe(org.id);
    // The same for create domain (one statement too, or the transaction past its share).
    const claimed = await env.deps.db
      .select()
      .from(events)
      .where(and(eq(events.environmentId, env.environmentId), eq(events.event, 'organization_domain.created')));
    expect(claimed).toHaveLength(1);
    expect(claimed[0]?.data).toEqual(domain);
    expect(claimed[0]?.organizationId).toBe(org.id);
    const domains = await env.deps.db
      .select({ id: organizationDomains.id, token: organizationDomains.verificationToken })
      .from(organizationDomains)
      .where(eq(organizationDomains.environmentId, env.environmentId));
    expect(domains).toEqual([{ id: domain.id, token: domain.verification_token }]);
  });
});
