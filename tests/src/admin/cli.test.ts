import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { apiKeys, newId, webhookEndpoints } from '@atrium/db';
import { ensureAdminToken, openWebhookSecret } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli } from '../helpers/cli.ts';
import { storedEvents } from '../helpers/events.ts';
import { freePort } from '../helpers/spawn-server.ts';
import { adminTokenOf, makeOrganization } from '../helpers/tokens.ts';
import { getWorld, HttpClient, newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

const ADMIN_TOKEN = `atrium_admin_${'T'.repeat(20)}${process.pid.toString().padStart(20, '0')}`;

async function cli(args: string[], token: string | null = ADMIN_TOKEN, url?: string) {
  const world = await getWorld();
  return runAdminCli(args, { ATRIUM_URL: url ?? world.url, ...(token ? { ATRIUM_ADMIN_TOKEN: token } : {}) });
}

/** Whether each key still authenticates (GET /organizations answers 200). */
async function keysWork(...keys: string[]): Promise<boolean[]> {
  const world = await getWorld();
  return Promise.all(
    keys.map(
      async (key) =>
        (await new HttpClient(world.url, { Authorization: `Bearer ${key}` }).get('/organizations')).status === 200,
    ),
  );
}

beforeAll(async () => {
  const world = await getWorld();
  await ensureAdminToken(world.deps, ADMIN_TOKEN);
});

describe('admin CLI', () => {
  it('creates an environment whose key works at once, and lists it', async () => {
    const created = await cli(['environments', 'create', '--name', 'cli-env', '--json']);
    expect(created.code).toBe(0);
    const body = JSON.parse(created.out);
    expect(Object.keys(body).sort()).toEqual(['api_key', 'client_id', 'environment_id']);
    expect(body.environment_id).toMatch(/^env_/);
    expect(body.client_id).toMatch(/^client_/);
    expect(body.api_key).toMatch(/^sk_test_[0-9A-Za-z]{40}$/);
    const world = await getWorld();
    const http = new HttpClient(world.url, { Authorization: `Bearer ${body.api_key}` });
    expect((await http.get('/organizations')).status).toBe(200);

    const listed = await cli(['environments', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(body.environment_id);
    expect(listed.out).toContain('cli-env');
  });

  it('refuses a second environment of the same name (409 environment_name_taken), storing nothing', async () => {
    const name = `cli-dup-${process.pid}-${Date.now()}`;
    const first = await cli(['environments', 'create', '--name', name, '--json']);
    expect(first.code).toBe(0);
    const again = await cli(['environments', 'create', '--name', name, '--json']);
    expect(again.code).toBe(1);
    expect(again.err).toBe(
      'error: An environment with this name already exists; choose another name. (environment_name_taken)\n',
    );
    // The same through the admin API.
    const world = await getWorld();
    const res = await fetch(`${world.url}/trpc/admin.environments.create`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: ` ${name} ` }),
    });
    const body = (await res.json()) as { error: { data: { contract: { status: number; body: { code: string } } } } };
    expect(res.status).toBe(409);
    expect(body.error.data.contract).toMatchObject({ status: 409, body: { code: 'environment_name_taken' } });
    const listed = JSON.parse((await cli(['environments', 'list', '--json'])).out) as { name: string }[];
    expect(listed.filter((e) => e.name === name)).toHaveLength(1);
    // So the name still names exactly one environment.
    const keys = await cli(['api-keys', 'list', '--environment', name, '--json']);
    expect(keys.code).toBe(0);
    expect(JSON.parse(keys.out)).toHaveLength(1);
  });

  it('creates and revokes API keys; a revoked key is refused at once', async () => {
    const env = JSON.parse((await cli(['environments', 'create', '--name', 'cli-keys', '--json'])).out);
    const world = await getWorld();
    const second = JSON.parse((await cli(['api-keys', 'create', '--environment', env.environment_id, '--json'])).out);
    expect(Object.keys(second)).toEqual(['api_key']);
    const http = new HttpClient(world.url, { Authorization: `Bearer ${second.api_key}` });
    expect((await http.get('/organizations')).status).toBe(200); // now cached
    const revoked = await cli([
      'api-keys',
      'revoke',
      '--environment',
      env.environment_id,
      '--key-prefix',
      second.api_key.slice(0, 16),
    ]);
    expect(revoked.code).toBe(0);
    expect((await http.get('/organizations')).status).toBe(401);
    // The first key of the environment still works.
    const first = new HttpClient(world.url, { Authorization: `Bearer ${env.api_key}` });
    expect((await first.get('/organizations')).status).toBe(200);
    const missing = await cli([
      'api-keys',
      'revoke',
      '--environment',
      env.environment_id,
      '--key-prefix',
      'sk_test_nomatch0',
    ]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('entity_not_found');
  });

  it('api-keys revoke refuses a prefix shorter than the listed one and revokes nothing', async () => {
    const env = JSON.parse((await cli(['environments', 'create', '--name', 'cli-short-prefix', '--json'])).out);
    const second = JSON.parse((await cli(['api-keys', 'create', '--environment', env.environment_id, '--json'])).out);
    const short = await cli(['api-keys', 'revoke', '--environment', env.environment_id, '--key-prefix', 'sk_test_']);
    expect(short.code).toBe(1);
    expect(short.err).toContain('Validation failed. (invalid_request_parameters)');
    expect(short.err).toContain(
      'key_prefix: key_prefix must be at least 16 characters (the prefix api-keys list shows), or revoke by id.',
    );
    expect(await keysWork(env.api_key, second.api_key)).toEqual([true, true]);
    const listed = JSON.parse((await cli(['api-keys', 'list', '--environment', env.environment_id, '--json'])).out);
    expect(listed.map((k: { revoked_at: string | null }) => k.revoked_at)).toEqual([null, null]);
  });

  it('api-keys revoke refuses a prefix that more than one key shares (409 naming how many)', async () => {
    const env = JSON.parse((await cli(['environments', 'create', '--name', 'cli-shared-prefix', '--json'])).out);
    const world = await getWorld();
    // Two more keys whose listed prefixes collide (1 in 62^8 by chance; made here on purpose).
    const prefix = 'sk_test_Collide1';
    await world.deps.db.insert(apiKeys).values(
      [1, 2].map((n) => ({
        id: newId('apiKey'),
        environmentId: env.environment_id,
        keyHash: `${'0'.repeat(63)}${n}-${env.environment_id}`,
        keyPrefix: prefix,
      })),
    );
    const shared = await cli(['api-keys', 'revoke', '--environment', env.environment_id, '--key-prefix', prefix]);
    expect(shared.code).toBe(1);
    expect(shared.err).toContain(
      `error: 2 API keys match the prefix '${prefix}'; revoke one by id (api-keys list shows ids). (ambiguous_key_prefix)`,
    );
    const rows = await world.deps.db
      .select({ revokedAt: apiKeys.revokedAt })
      .from(apiKeys)
      .where(eq(apiKeys.environmentId, env.environment_id));
    expect(rows.map((r) => r.revokedAt)).toEqual([null, null, null]);
    expect(await keysWork(env.api_key)).toEqual([true]);
  });

  it('api-keys revoke --id revokes exactly that key, the first-start key staying valid', async () => {
    const env = JSON.parse((await cli(['environments', 'create', '--name', 'cli-revoke-id', '--json'])).out);
    const second = JSON.parse((await cli(['api-keys', 'create', '--environment', env.environment_id, '--json'])).out);
    const listed = JSON.parse((await cli(['api-keys', 'list', '--environment', env.environment_id, '--json'])).out);
    const target = listed.find((k: { key_prefix: string }) => k.key_prefix === second.api_key.slice(0, 16));
    const revoked = await cli(['api-keys', 'revoke', '--environment', env.environment_id, '--id', target.id, '--json']);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.out)).toMatchObject({ environment_id: env.environment_id, id: target.id });
    expect(await keysWork(env.api_key, second.api_key)).toEqual([true, false]);
    const both = await cli(['api-keys', 'revoke', '--environment', env.environment_id]);
    expect(both.code).toBe(1);
    expect(both.err).toContain('id: Pass exactly one of id or key_prefix.');
  });

  it('turns feature flags on and off', async () => {
    const env = JSON.parse((await cli(['environments', 'create', '--name', 'cli-flags', '--json'])).out);
    const off = await cli(['flags', 'set', '--environment', env.environment_id, '--flag', 'groups', '--off', '--json']);
    expect(JSON.parse(off.out).flags).toEqual({ groups: false, agents: true });
    const on = await cli(['flags', 'set', '--environment', 'cli-flags', '--flag', 'groups', '--on']);
    expect(on.code).toBe(0);
    expect(on.out).toContain('"groups":true');
    const both = await cli(['flags', 'set', '--environment', env.environment_id, '--flag', 'groups']);
    expect(both.code).not.toBe(0);
  });

  it('refuses a missing or wrong admin token, naming ATRIUM_ADMIN_TOKEN', async () => {
    const missing = await cli(['environments', 'list'], null);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('ATRIUM_ADMIN_TOKEN is not set');
    const wrong = await cli(['environments', 'list'], `atrium_admin_${'x'.repeat(40)}`);
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain('(unauthorized)');
    expect(wrong.err).toContain('refused the admin token in ATRIUM_ADMIN_TOKEN');
  });

  it('says it cannot reach Atrium at the URL, and how to point it elsewhere, when no server answers', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const down = await cli(['environments', 'list'], ADMIN_TOKEN, url);
    expect(down.code).toBe(1);
    expect(down.err).toBe(
      `error: cannot reach Atrium at ${url} (ECONNREFUSED). Is the server running? Point the CLI at another server with ATRIUM_URL=<url>.\n`,
    );
    expect(down.err).not.toContain('fetch failed');
  });

  it('prints the reason of a validation failure, field by field', async () => {
    const long = await cli(['environments', 'create', '--name', 'x'.repeat(200)]);
    expect(long.code).toBe(1);
    expect(long.err).toContain('Validation failed. (invalid_request_parameters)');
    expect(long.err).toMatch(/\n {2}name: name: .*128/);
    expect((await cli(['environments', 'list', '--json'])).out).not.toContain('x'.repeat(200));
  });

  it('flags set accepts only the flags that exist (422 naming them) and stores nothing else', async () => {
    const env = JSON.parse((await cli(['environments', 'create', '--name', 'cli-bogus-flag', '--json'])).out);
    const bogus = await cli(['flags', 'set', '--environment', env.environment_id, '--flag', 'bogus', '--on']);
    expect(bogus.code).toBe(1);
    expect(bogus.err).toContain("Unknown flag 'bogus'; the flags are: groups, agents.");
    expect(bogus.err).toContain('(invalid_request_parameters)');
    const listed = JSON.parse((await cli(['environments', 'list', '--json'])).out) as {
      id: string;
      flags: Record<string, boolean>;
    }[];
    expect(listed.find((e) => e.id === env.environment_id)?.flags).toEqual({ groups: true, agents: true });
  });

  it('admin-tokens: create prints a token once, list shows ids, revoke refuses the token in use and makes another 401', async () => {
    const created = await cli(['admin-tokens', 'create', '--json']);
    expect(created.code).toBe(0);
    const made = JSON.parse(created.out) as { id: string; token: string };
    expect(made.id).toMatch(/^admintok_/);
    expect(made.token).toMatch(/^atrium_admin_[0-9A-Za-z]{40}$/);
    const mine = await cli(['admin-tokens', 'list', '--json'], made.token);
    expect(mine.code).toBe(0);
    const listed = JSON.parse(mine.out) as { id: string; current: boolean }[];
    expect(listed.filter((t) => t.current).map((t) => t.id)).toEqual([made.id]);
    expect(mine.out).not.toContain(made.token);

    const self = await cli(['admin-tokens', 'revoke', '--id', made.id], made.token);
    expect(self.code).toBe(1);
    expect(self.err).toContain('(admin_token_in_use)');
    expect((await cli(['environments', 'list'], made.token)).code).toBe(0);

    const revoked = await cli(['admin-tokens', 'revoke', '--id', made.id, '--json']);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.out)).toEqual({ id: made.id, revoked: true });
    const refused = await cli(['environments', 'list'], made.token);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('(unauthorized)');
    const world = await getWorld();
    const res = await fetch(`${world.url}/trpc/admin.environments.list`, {
      headers: { Authorization: `Bearer ${made.token}` },
    });
    expect(res.status).toBe(401);
    const again = await cli(['admin-tokens', 'revoke', '--id', made.id]);
    expect(again.code).toBe(1);
    expect(again.err).toContain('(entity_not_found)');
  });

  it('is installed as `npx atrium`', async () => {
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'atrium', '--help'], {
      env: { ...process.env, ATRIUM_URL: 'http://127.0.0.1:1' },
    });
    expect(stdout).toContain('environments');
    expect(stdout).toContain('api-keys');
  });
});

describe('admin CLI: agents, connections, signing keys', () => {
  async function cli(env: TestEnvironment, ...argv: string[]) {
    return runAdminCli(argv, { ATRIUM_URL: env.world.url, ATRIUM_ADMIN_TOKEN: await adminTokenOf() });
  }
  it('agents register --json prints a registration id, an API key and an access token that validate', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const registered = await cli(
      env,
      'agents',
      'register',
      '--environment',
      env.environmentId,
      '--organization',
      organizationId,
      '--json',
    );
    expect(registered.code).toBe(0);
    const body = registered.json();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'api_key', 'registration_id']);
    expect(body.registration_id).toMatch(/^agent_reg_/);
    expect(body.api_key).toMatch(/^sk_agent_[0-9A-Za-z]{40}$/);
    const valid = await env.http.post('/agents/credentials/validate', {
      type: 'access_token',
      credential: body.access_token,
    });
    expect(valid.body.valid).toBe(true);

    const revoked = await cli(env, 'agents', 'revoke', '--registration', body.registration_id, '--json');
    expect(revoked.code).toBe(0);
    expect(revoked.json()).toMatchObject({ registration_id: body.registration_id, status: 'revoked' });
    const after = await env.http.post('/agents/credentials/validate', { type: 'api_key', credential: body.api_key });
    expect(after.body.valid).toBe(false);

    const unknown = await cli(env, 'agents', 'revoke', '--registration', 'agent_reg_01HZZZZZZZZZZZZZZZZZZZZZZZ');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('entity_not_found');
  });

  it('connections create / deactivate / activate / delete', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const created = await cli(
      env,
      'connections',
      'create',
      '--environment',
      env.environmentId,
      '--organization',
      organizationId,
      '--type',
      'OktaSAML',
      '--name',
      'Okta',
      '--json',
    );
    expect(created.code).toBe(0);
    const connection = created.json();
    expect(connection).toMatchObject({
      object: 'connection',
      connection_type: 'OktaSAML',
      name: 'Okta',
      state: 'active',
    });
    expect((await cli(env, 'connections', 'deactivate', '--connection', connection.id, '--json')).json().state).toBe(
      'inactive',
    );
    expect((await cli(env, 'connections', 'activate', '--connection', connection.id, '--json')).json().state).toBe(
      'active',
    );
    expect((await env.http.get('/connections')).body.data).toHaveLength(1);
    expect((await cli(env, 'connections', 'delete', '--connection', connection.id)).code).toBe(0);
    expect((await env.http.get('/connections')).body.data).toHaveLength(0);
    const bad = await cli(
      env,
      'connections',
      'create',
      '--environment',
      env.environmentId,
      '--organization',
      organizationId,
      '--type',
      'FaxSAML',
      '--name',
      'x',
    );
    expect(bad.code).toBe(1);
  });

  it('signing-keys rotate publishes a new key at once', async () => {
    const env = await newEnvironment();
    await env.http.get(`/sso/jwks/${env.clientId}`);
    const rotated = await cli(env, 'signing-keys', 'rotate', '--environment', env.environmentId, '--json');
    expect(rotated.code).toBe(0);
    const { kid, active_from } = rotated.json();
    expect(Date.parse(active_from) - Date.now()).toBeGreaterThan(4 * 60_000); // default delay: 5 minutes
    const jwks = await env.http.get(`/sso/jwks/${env.clientId}`);
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toContain(kid);
    expect(jwks.body.keys).toHaveLength(2);
    const listed = await cli(env, 'signing-keys', 'list', '--environment', env.environmentId, '--json');
    expect(listed.json().find((k: { signing: boolean }) => k.signing).kid).not.toBe(kid);
  });
});

describe('admin CLI: webhooks and domains', () => {
  const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const adminToken = `atrium_admin_${[...randomBytes(40)].map((b) => ALPHABET[b % 62]).join('')}`;

  async function cli(...argv: string[]) {
    const world = await getWorld();
    return runAdminCli(argv, { ATRIUM_URL: world.url, ATRIUM_ADMIN_TOKEN: adminToken });
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
      expect(
        (await cli('webhooks', 'delete', '--environment', env.environmentId, '--id', body.id, '--json')).code,
      ).toBe(0);
      const missing = await cli('webhooks', 'delete', '--environment', env.environmentId, '--id', body.id);
      expect(missing.code).toBe(1);
      expect(missing.err).toContain('entity_not_found');
    });

    it('refuses a non-http URL and stores nothing', async () => {
      const env = await newEnvironment();
      const res = await cli(
        'webhooks',
        'create',
        '--environment',
        env.environmentId,
        '--url',
        'gopher://x.example.com/',
      );
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
      const res = await cli(
        'domains',
        'verify-manually',
        '--domain-id',
        domain.id,
        '--reason',
        'DNS is managed by hand',
        '--json',
      );
      expect(res.code).toBe(0);
      expect(JSON.parse(res.out)).toMatchObject({ id: domain.id, state: 'verified', verification_strategy: 'manual' });
      expect(res.out).not.toContain(domain.verification_token);
      const read = await env.caller.organizationDomains.get({ id: domain.id });
      expect(read).toMatchObject({ state: 'verified', verification_strategy: 'manual' });
      expect((await storedEvents(env)).slice(before).map((e) => e.event)).toEqual(['organization_domain.verified']);

      const again = await cli('domains', 'verify-manually', '--domain-id', domain.id, '--reason', 'again');
      expect(again.code).toBe(1);
      expect(again.err).toContain('domain_already_verified');
      const unknown = await cli(
        'domains',
        'verify-manually',
        '--domain-id',
        'org_domain_01JUNKNOWN00000000000000000',
        '--reason',
        'unknown',
      );
      expect(unknown.code).toBe(1);
      expect(unknown.err).toContain('entity_not_found');
    });
  });
});
