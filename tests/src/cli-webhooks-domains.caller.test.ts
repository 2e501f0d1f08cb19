import { randomBytes } from 'node:crypto';
import { webhookEndpoints } from '@atrium/db';
import { ensureAdminToken, openWebhookSecret } from '@atrium/routers';
import { runCli } from '@atrium/server';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { storedEvents } from './helpers/events.ts';
import { getWorld, newEnvironment, uniqueDomain } from './helpers/world.ts';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const adminToken = `atrium_admin_${[...randomBytes(40)].map((b) => ALPHABET[b % 62]).join('')}`;

async function cli(...argv: string[]) {
  const world = await getWorld();
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    env: { ATRIUM_URL: world.url, ATRIUM_ADMIN_TOKEN: adminToken },
  });
  return { code, out, err };
}

beforeAll(async () => {
  const world = await getWorld();
  await ensureAdminToken(world.deps, adminToken);
});

describe('atrium webhooks', () => {
  it('creates (printing id and secret), lists, disables and deletes endpoints', async () => {
    const env = await newEnvironment();
    const created = await cli(
      'webhooks',
      'create',
      '--environment',
      env.environmentId,
      '--url',
      'https://hooks.example.com/cli',
      '--events',
      'organization.created, organization_domain.verified',
      '--json',
    );
    expect(created.code).toBe(0);
    const body = JSON.parse(created.out);
    expect(Object.keys(body).sort()).toEqual(['id', 'secret']);
    expect(body.id).toMatch(/^we_/);
    const [stored] = await env.deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, body.id));
    expect(openWebhookSecret(env.deps.tokens.masterKey, body.id, stored?.secret as string)).toBe(body.secret);
    expect(stored).toMatchObject({
      environmentId: env.environmentId,
      events: ['organization.created', 'organization_domain.verified'],
    });

    const all = await cli(
      'webhooks',
      'create',
      '--environment',
      env.environmentId,
      '--url',
      'https://a.example.com/',
      '--json',
    );
    const allId = JSON.parse(all.out).id;
    const listed = await cli('webhooks', 'list', '--environment', env.environmentId, '--json');
    const rows = JSON.parse(listed.out);
    expect(rows.map((r: { id: string }) => r.id)).toEqual([body.id, allId]);
    expect(rows[1].events).toEqual(['*']);
    expect(listed.out).not.toContain(body.secret);

    const disabled = await cli('webhooks', 'disable', '--environment', env.environmentId, '--id', body.id, '--json');
    expect(JSON.parse(disabled.out).status).toBe('disabled');
    expect((await cli('webhooks', 'delete', '--environment', env.environmentId, '--id', body.id, '--json')).code).toBe(
      0,
    );
    const missing = await cli('webhooks', 'delete', '--environment', env.environmentId, '--id', body.id);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('entity_not_found');
  });

  it('refuses a non-http URL and stores nothing', async () => {
    const env = await newEnvironment();
    const res = await cli('webhooks', 'create', '--environment', env.environmentId, '--url', 'gopher://x.example.com/');
    expect(res.code).toBe(1);
    expect(
      await env.deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.environmentId, env.environmentId)),
    ).toEqual([]);
  });
});

describe('atrium domains verify-manually', () => {
  it('marks a domain verified with strategy manual through the state machine and its events', async () => {
    const env = await newEnvironment();
    const org = await env.caller.organizations.create({ name: 'Acme' });
    const domain = await env.caller.organizationDomains.create({ organization_id: org.id, domain: uniqueDomain() });
    const before = (await storedEvents(env)).length;
    const res = await cli('domains', 'verify-manually', '--domain-id', domain.id, '--json');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.out)).toMatchObject({ id: domain.id, state: 'verified', verification_strategy: 'manual' });
    expect(res.out).not.toContain(domain.verification_token);
    const read = await env.caller.organizationDomains.get({ id: domain.id });
    expect(read).toMatchObject({ state: 'verified', verification_strategy: 'manual' });
    expect((await storedEvents(env)).slice(before).map((e) => e.event)).toEqual(['organization_domain.verified']);

    const again = await cli('domains', 'verify-manually', '--domain-id', domain.id);
    expect(again.code).toBe(1);
    expect(again.err).toContain('domain_already_verified');
    const unknown = await cli('domains', 'verify-manually', '--domain-id', 'org_domain_01JUNKNOWN00000000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('entity_not_found');
  });
});
