import { randomBytes } from 'node:crypto';
import { webhookEndpoints } from '@atrium/db';
import { openWebhookSecret, sealLegacyWebhookSecrets } from '@atrium/routers';
import { WebhookWorker } from '@atrium/server';
import { WorkOS } from '@workos-inc/node';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { Receiver } from './helpers/receiver.ts';
import { newEnvironment, type TestEnvironment } from './helpers/world.ts';

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const sdk = () =>
  new WorkOS('sk_test_unused', { apiHostname: '127.0.0.1', port: 1, https: false, clientId: 'client_x' });

async function storedSecret(env: TestEnvironment, id: string): Promise<string> {
  const [row] = await env.deps.db
    .select({ secret: webhookEndpoints.secret })
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.id, id));
  if (!row) throw new Error(`no endpoint ${id}`);
  return row.secret;
}

/** Delivers one organization.created to `url`'s receiver and returns what the SDK verified. */
async function deliverAndVerify(env: TestEnvironment, receiver: Receiver, secret: string) {
  await env.caller.organizations.create({ name: 'Acme' });
  const worker = new WebhookWorker(env.deps, {
    allowPrivate: true,
    environmentId: env.environmentId,
    purgeEveryMs: Number.POSITIVE_INFINITY,
  });
  expect(await worker.tick()).toBe(1);
  await worker.drain();
  const [request] = receiver.requests;
  if (!request) throw new Error('nothing delivered');
  const sigHeader = request.headers['workos-signature'] as string;
  return sdk().webhooks.constructEvent({ payload: request.body, sigHeader, secret });
}

describe('webhook secrets at rest', () => {
  it('are stored encrypted under the master key; the API still shows the secret and deliveries verify', async () => {
    const env = await newEnvironment();
    const receiver = await new Receiver().start();
    receivers.push(receiver);
    const created = await env.http.post('/webhook_endpoints', {
      endpoint_url: receiver.url,
      events: ['organization.created'],
    });
    expect(created.status).toBe(201);
    const secret: string = created.body.secret;
    expect(secret).toMatch(/^[0-9A-Za-z]{40}$/);

    const stored = await storedSecret(env, created.body.id);
    expect(stored).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(Buffer.from(secret).toString('base64url').slice(0, 20));
    expect(openWebhookSecret(env.deps.tokens.masterKey, created.body.id, stored)).toBe(secret);
    // Bound to the master key and to its row.
    expect(() => openWebhookSecret(randomBytes(32), created.body.id, stored)).toThrow(/cannot be decrypted/);
    expect(() => openWebhookSecret(env.deps.tokens.masterKey, 'we_01HZZZZZZZZZZZZZZZZZZZZZZZ', stored)).toThrow(
      /cannot be decrypted/,
    );

    expect((await env.http.get(`/webhook_endpoints/${created.body.id}`)).body.secret).toBe(secret);
    const event = await deliverAndVerify(env, receiver, secret);
    expect(event).toMatchObject({ event: 'organization.created', data: { name: 'Acme' } });
  });

  it('reads and signs with a legacy plaintext secret, and seals it at start-up', async () => {
    const env = await newEnvironment();
    const receiver = await new Receiver().start();
    receivers.push(receiver);
    const created = await env.caller.webhookEndpoints.create({ endpoint_url: receiver.url, events: ['*'] });
    // A row written before secrets were encrypted.
    const legacy = 'LegacyPlaintextSecret0123456789abcdefghi';
    await env.deps.db.update(webhookEndpoints).set({ secret: legacy }).where(eq(webhookEndpoints.id, created.id));

    expect((await env.caller.webhookEndpoints.get({ id: created.id })).secret).toBe(legacy);
    expect(await deliverAndVerify(env, receiver, legacy)).toMatchObject({ event: 'organization.created' });

    expect(await sealLegacyWebhookSecrets(env.deps, 1)).toBeGreaterThanOrEqual(1);
    const sealed = await storedSecret(env, created.id);
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain(legacy);
    expect((await env.caller.webhookEndpoints.get({ id: created.id })).secret).toBe(legacy);
    // Once sealed, a second pass leaves it alone.
    await sealLegacyWebhookSecrets(env.deps);
    expect(await storedSecret(env, created.id)).toBe(sealed);
  });
});
