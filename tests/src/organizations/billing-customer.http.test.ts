import { events, newId, organizations } from '@atrium/db';
import { WebhookWorker } from '@atrium/server';
import { UnprocessableEntityException } from '@workos-inc/node';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { Receiver } from '../helpers/receiver.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { storedCounts } from '../helpers/store.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

/**
 * One stored billing customer id under two names: `billing_customer_id` (the specification's) and
 * `stripe_customer_id` (upstream's, which the Node SDK sends and reads).
 */
async function storedBilling(env: TestEnvironment, id: string) {
  const [row] = await env.deps.db
    .select({ value: organizations.billingCustomerId, updatedAt: organizations.updatedAt })
    .from(organizations)
    .where(eq(organizations.id, id));
  return row;
}

describe('organization billing customer id (billing_customer_id = stripe_customer_id)', () => {
  it('answers both names on create, get, list and update; stripe_customer_id absent (not null) until set', async () => {
    const env = await newEnvironment();
    const created = await env.http.post('/organizations', { name: 'Acme' });
    expect(created.status).toBe(201);
    expect(created.body.billing_customer_id).toBeNull();
    // Upstream declares stripe_customer_id an optional string, not a nullable one.
    expect(created.body).not.toHaveProperty('stripe_customer_id');
    expect((await env.http.get(`/organizations/${created.body.id}`)).body).not.toHaveProperty('stripe_customer_id');
    expect((await env.http.get('/organizations')).body.data[0]).not.toHaveProperty('stripe_customer_id');

    const viaStripe = await env.http.put(`/organizations/${created.body.id}`, { stripe_customer_id: 'cus_stripe' });
    expect(viaStripe.status).toBe(200);
    expect(viaStripe.body).toMatchObject({ billing_customer_id: 'cus_stripe', stripe_customer_id: 'cus_stripe' });
    expect((await storedBilling(env, created.body.id))?.value).toBe('cus_stripe');

    const viaBilling = await env.http.put(`/organizations/${created.body.id}`, { billing_customer_id: 'cus_billing' });
    expect(viaBilling.body).toMatchObject({ billing_customer_id: 'cus_billing', stripe_customer_id: 'cus_billing' });
    const read = await env.http.get(`/organizations/${created.body.id}`);
    expect(read.body).toMatchObject({ billing_customer_id: 'cus_billing', stripe_customer_id: 'cus_billing' });
    const listed = await env.http.get('/organizations');
    expect(listed.body.data[0]).toMatchObject({
      billing_customer_id: 'cus_billing',
      stripe_customer_id: 'cus_billing',
    });

    // The same value under both names is one value; null under either clears it.
    const same = await env.http.put(`/organizations/${created.body.id}`, {
      billing_customer_id: 'cus_same',
      stripe_customer_id: 'cus_same',
    });
    expect(same.status).toBe(200);
    expect(same.body.stripe_customer_id).toBe('cus_same');
    const cleared = await env.http.put(`/organizations/${created.body.id}`, { stripe_customer_id: null });
    expect(cleared.body.billing_customer_id).toBeNull();
    expect(cleared.body).not.toHaveProperty('stripe_customer_id');
    expect((await env.http.get(`/organizations/${created.body.id}`)).body).not.toHaveProperty('stripe_customer_id');
  });

  it('leaves stripe_customer_id out of the event payloads of an organization without one', async () => {
    const env = await newEnvironment();
    const created = await env.http.post('/organizations', { name: 'Acme' });
    await env.http.put(`/organizations/${created.body.id}`, { stripe_customer_id: 'cus_1' });
    await env.http.put(`/organizations/${created.body.id}`, { stripe_customer_id: null });
    await env.http.delete(`/organizations/${created.body.id}`);
    const listed = await env.http.get('/events?order=asc');
    const payloads = listed.body.data.map((e: { event: string; data: Record<string, unknown> }) => [e.event, e.data]);
    expect(payloads.map(([name]: [string]) => name)).toEqual([
      'organization.created',
      'organization.updated',
      'organization.updated',
      'organization.deleted',
    ]);
    expect(payloads.map(([, data]: [string, Record<string, unknown>]) => data.stripe_customer_id)).toEqual([
      undefined,
      'cus_1',
      undefined,
      undefined,
    ]);
    for (const [, data] of payloads) expect(data).not.toHaveProperty('stripe_customer_id', null);
    // Nor is a null stored, so no reader of the table (webhooks, exports) sees one.
    const stored = await env.deps.db
      .select({ data: events.data })
      .from(events)
      .where(eq(events.environmentId, env.environmentId));
    expect(stored.filter((row) => row.data.stripe_customer_id === null)).toEqual([]);
  });

  it('serves a payload stored with stripe_customer_id: null (before the fix) without it, by the events API and webhooks', async () => {
    const env = await newEnvironment();
    const receiver = await new Receiver().start();
    try {
      await env.http.post('/webhook_endpoints', { endpoint_url: receiver.url, events: ['organization.updated'] });
      const at = new Date().toISOString();
      const old = {
        object: 'organization',
        id: 'org_old',
        name: 'Old',
        domains: [],
        metadata: {},
        external_id: null,
        billing_customer_id: null,
        stripe_customer_id: null,
        allow_profiles_outside_organization: false,
        created_at: at,
        updated_at: at,
      };
      await env.deps.db.insert(events).values({
        id: newId('event'),
        environmentId: env.environmentId,
        event: 'organization.updated',
        data: old,
        createdAt: new Date(),
        fanoutPending: true,
      });
      const { stripe_customer_id: _null, ...expected } = old;
      const listed = await env.http.get('/events?events=organization.updated');
      expect(listed.body.data).toHaveLength(1);
      expect(listed.body.data[0].data).toEqual(expected);

      const worker = new WebhookWorker(env.deps, {
        allowPrivate: true,
        environmentId: env.environmentId,
        purgeEveryMs: Number.POSITIVE_INFINITY,
      });
      expect(await worker.tick()).toBe(1);
      await worker.drain();
      expect(receiver.requests).toHaveLength(1);
      expect(JSON.parse(receiver.requests[0]?.body ?? '{}').data).toEqual(expected);
    } finally {
      await receiver.close();
    }
  });

  it('refuses two different values with 422 and stores nothing', async () => {
    const env = await newEnvironment();
    const created = await env.http.post('/organizations', { name: 'Acme' });
    await env.http.put(`/organizations/${created.body.id}`, { billing_customer_id: 'cus_before' });
    const before = await storedBilling(env, created.body.id);
    const counts = await storedCounts(env);

    const res = await env.http.put(`/organizations/${created.body.id}`, {
      name: 'Renamed',
      billing_customer_id: 'cus_a',
      stripe_customer_id: 'cus_b',
    });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('invalid_request_parameters');
    expect(res.body.errors).toEqual([expect.objectContaining({ code: 'billing_customer_id_conflict' })]);
    expect(await storedBilling(env, created.body.id)).toEqual(before);
    expect((await env.http.get(`/organizations/${created.body.id}`)).body.name).toBe('Acme');
    expect(await storedCounts(env)).toEqual(counts);

    const tooLong = await env.http.put(`/organizations/${created.body.id}`, { stripe_customer_id: 'c'.repeat(257) });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.errors[0].field).toBe('stripe_customer_id');
    expect(await storedBilling(env, created.body.id)).toEqual(before);
  });

  it('reads back stripeCustomerId through the official SDK', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    // Absent on the wire, so the SDK reads undefined: a string or nothing, as its type says.
    expect(org.stripeCustomerId).toBeUndefined();
    expect((await workos.organizations.getOrganization(org.id)).stripeCustomerId).toBeUndefined();
    const updated = await workos.organizations.updateOrganization({ organization: org.id, stripeCustomerId: 'cus_9' });
    expect(updated.stripeCustomerId).toBe('cus_9');
    expect((await workos.organizations.getOrganization(org.id)).stripeCustomerId).toBe('cus_9');
    const listed = await workos.organizations.listOrganizations();
    expect(listed.data[0]?.stripeCustomerId).toBe('cus_9');
    // The specification's name reads the same value.
    expect((await env.http.get(`/organizations/${org.id}`)).body.billing_customer_id).toBe('cus_9');
    await expect(
      env.http.put(`/organizations/${org.id}`, { billing_customer_id: 'x', stripe_customer_id: 'y' }),
    ).resolves.toMatchObject({ status: 422 });
    await expect(
      workos.organizations.updateOrganization({ organization: org.id, stripeCustomerId: 'c'.repeat(300) }),
    ).rejects.toBeInstanceOf(UnprocessableEntityException);
  });
});
