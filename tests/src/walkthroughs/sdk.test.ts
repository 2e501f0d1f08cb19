import { type DevDnsServer, startDevDns, VerificationWorker, WebhookWorker } from '@atrium/server';
import { WorkOS } from '@workos-inc/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Receiver } from '../helpers/receiver.ts';
import { newEnvironment, uniqueDomain } from '../helpers/world.ts';

/** docs/events.md's walk-through, end to end, with the official SDK and both workers on their timers. */
describe('walk-through: verify a domain by DNS, see the event, receive the signed webhook', () => {
  let dns: DevDnsServer;
  let receiver: Receiver;
  beforeAll(async () => {
    dns = await startDevDns();
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await dns.close();
    await receiver.close();
  });

  it('works with the official SDK', async () => {
    const env = await newEnvironment();
    const workos = new WorkOS(env.apiKey, {
      apiHostname: '127.0.0.1',
      port: Number(new URL(env.world.url).port),
      https: false,
      clientId: env.clientId,
    });
    const verification = new VerificationWorker(env.deps, {
      servers: [dns.address],
      intervalMs: 100,
      environmentId: env.environmentId,
    });
    const webhooks = new WebhookWorker(env.deps, {
      allowPrivate: true,
      intervalMs: 100,
      environmentId: env.environmentId,
      purgeEveryMs: Number.POSITIVE_INFINITY,
    });
    verification.start();
    webhooks.start();
    try {
      const endpoint = await workos.webhooks.createWebhookEndpoint({
        endpointUrl: receiver.url,
        events: ['organization_domain.verified'],
      });
      const org = await workos.organizations.createOrganization({ name: 'Acme' });
      const domain = await workos.organizationDomains.createOrganizationDomain({
        organizationId: org.id,
        domain: uniqueDomain(),
      });
      dns.set(`${domain.verificationPrefix}.${domain.domain}`, { txt: [domain.verificationToken as string] });
      const verifying = await workos.organizationDomains.verifyOrganizationDomain(domain.id);
      expect(verifying.state).toBe('pending');

      const deadline = Date.now() + 5_000;
      let state: string = verifying.state;
      while (state !== 'verified' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        state = (await workos.organizationDomains.getOrganizationDomain(domain.id)).state;
      }
      expect(state).toBe('verified');

      const events = await workos.events.listEvents({ events: ['organization_domain.verified'] });
      expect(events.data).toHaveLength(1);
      expect(events.data[0]).toMatchObject({ event: 'organization_domain.verified', data: { id: domain.id } });

      await receiver.waitFor(1, 5_000);
      const [request] = receiver.requests;
      const event = await workos.webhooks.constructEvent({
        payload: request?.body as string,
        sigHeader: request?.headers['workos-signature'] as string,
        secret: endpoint.secret,
      });
      expect(event).toMatchObject({ id: events.data[0]?.id, event: 'organization_domain.verified' });
    } finally {
      await Promise.all([verification.stop(), webhooks.stop()]);
    }
  });
});
