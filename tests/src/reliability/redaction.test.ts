import { Writable } from 'node:stream';
import { ensureAdminToken } from '@atrium/routers';
import { createLogger } from '@atrium/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCaller } from '../helpers/tokens.ts';
import { HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { adminTokenFor, startOwnApp } from './own-app.ts';

/** A pino destination that keeps every line. */
function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, stream, text: () => lines.join('\n') };
}

const SECRET = 'sk_test_SECRETSECRETSECRETSECRETSECRETSECRET12';

describe('log redaction (the server logger, output captured)', () => {
  it.each([
    ['an Authorization header', { req: { headers: { authorization: `Bearer ${SECRET}` } } }],
    ['bare headers', { headers: { authorization: `Bearer ${SECRET}`, cookie: SECRET } }],
    ['an API key field', { created: { api_key: SECRET } }],
    ['a verification token', { domain: { verification_token: SECRET } }],
    ['a nested verification token', { org: { domains: { first: { verification_token: SECRET } } } }],
    ['a JWT', { token: SECRET, client_token: SECRET, access_token: SECRET, jwt: SECRET }],
    ['a webhook secret', { endpoint: { secret: SECRET, webhook_secret: SECRET } }],
    ['a private key', { key: { private_key: SECRET, privateKey: SECRET } }],
    ['an agent credential', { body: { credential: SECRET } }],
    ['an organization API key value', { body: { value: SECRET }, created: { key: { value: SECRET } } }],
  ])('censors %s', (_label, object) => {
    const out = capture();
    const log = createLogger('info', out.stream);
    log.info(object, 'something happened');
    expect(out.lines).toHaveLength(1);
    expect(out.text()).not.toContain(SECRET);
    expect(out.text()).toContain('[redacted]');
    expect(() => JSON.parse(out.lines[0]!)).not.toThrow();
  });
});

describe('request logs of the facade', () => {
  const out = capture();
  let env: TestEnvironment;
  let own: Awaited<ReturnType<typeof startOwnApp>>;
  let api: HttpClient;
  let adminToken: string;

  beforeAll(async () => {
    env = await newEnvironment();
    const deps = { ...env.deps, log: createLogger('debug', out.stream) };
    adminToken = adminTokenFor('redaction');
    await ensureAdminToken(deps, adminToken);
    own = await startOwnApp(deps);
    api = new HttpClient(own.url, { Authorization: `Bearer ${env.apiKey}` });
  });
  afterAll(() => own.close());

  it('log every request as JSON with route and status, and never a key, token or Idempotency-Key', async () => {
    const org = await api.post('/organizations', { name: 'Logged' }, { 'Idempotency-Key': 'idem-secret-123456' });
    const domain = await api.post('/organization_domains', {
      organization_id: org.body.id,
      domain: `logged-${Date.now()}.com`,
    });
    expect(domain.status).toBe(201);
    await api.get(`/organizations/${org.body.id}`);
    await new HttpClient(own.url, { Authorization: 'Bearer sk_test_wrongwrongwrongwrongwrongwrongwrongwrong' }).get(
      '/organizations',
    );
    await new HttpClient(own.url, { Authorization: `Bearer ${adminToken}` }).get('/metrics');

    const text = out.text();
    const entries = out.lines.map((line) => JSON.parse(line));
    const requests = entries.filter((e) => e.msg === 'request');
    expect(requests.length).toBeGreaterThanOrEqual(5);
    expect(requests).toContainEqual(
      expect.objectContaining({ method: 'GET', route: '/organizations/{id}', status: 200, req_id: expect.any(String) }),
    );
    expect(requests).toContainEqual(expect.objectContaining({ route: '/organizations', status: 401 }));
    for (const secret of [
      env.apiKey,
      adminToken,
      domain.body.verification_token,
      'sk_test_wrongwrongwrongwrongwrongwrongwrongwrong',
      'idem-secret-123456',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(text.toLowerCase()).not.toContain('bearer');
  });
  it('never logs a client token, a webhook secret or an agent key, on success or refusal', async () => {
    const before = out.lines.length;
    const org = (await api.post('/organizations', { name: 'Tokens' })).body.id;
    const user = (await api.post('/user_management/users', { email: `logged-${Date.now()}@example.com` })).body.id;
    await api.post('/user_management/organization_memberships', { user_id: user, organization_id: org });
    const token = await api.post(
      '/client/token',
      { organization_id: org, user_id: user },
      { 'Idempotency-Key': 'k-1' },
    );
    expect(token.status).toBe(201);
    const replay = await api.post(
      '/client/token',
      { organization_id: org, user_id: user },
      { 'Idempotency-Key': 'k-1' },
    );
    expect(replay.text).toBe(token.text);
    const endpoint = await api.post('/webhook_endpoints', {
      endpoint_url: 'https://hooks.example.com/l',
      events: ['*'],
    });
    expect(endpoint.status).toBe(201);
    const agent = await (await adminCaller()).agents.register({ environment: env.environmentId, organization_id: org });
    const valid = await api.post('/agents/credentials/validate', { type: 'api_key', credential: agent.api_key });
    expect(valid.body.valid).toBe(true);
    const access = await api.post('/agents/credentials/validate', {
      type: 'access_token',
      credential: agent.access_token,
    });
    expect(access.body.valid).toBe(true);
    const wrong = `${agent.api_key.slice(0, -4)}zzzz`;
    expect((await api.post('/agents/credentials/validate', { type: 'api_key', credential: wrong })).body.valid).toBe(
      false,
    );
    const orgKey = await api.post(`/organizations/${org}/api_keys`, { name: 'logged' }, { 'Idempotency-Key': 'k-2' });
    expect(orgKey.status).toBe(201);
    expect((await api.post('/api_keys/validations', { value: orgKey.body.value })).body.api_key.id).toBe(
      orgKey.body.id,
    );
    const text = out.lines.slice(before).join('\n');
    expect(out.lines.length).toBeGreaterThan(before + 8);
    for (const secret of [
      orgKey.body.value,
      token.body.token,
      endpoint.body.secret,
      agent.api_key,
      agent.access_token,
      wrong,
      env.apiKey,
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it('never logs an invitation token from its path, nor puts it in a metrics label (issue #34 item 9)', async () => {
    const before = out.lines.length;
    const org = (await api.post('/organizations', { name: 'Invited' })).body.id;
    const sent = await api.post('/user_management/invitations', {
      email: `invited-${Date.now()}@example.com`,
      organization_id: org,
    });
    expect(sent.status).toBe(201);
    const token: string = sent.body.token;
    expect(token).toMatch(/^[0-9A-Za-z]{20,}$/);
    const byToken = `/user_management/invitations/by_token/${token}`;
    expect((await api.get(byToken)).status).toBe(200);
    expect((await api.get(`${byToken}/`)).status).toBe(200);
    expect((await api.get(byToken.toUpperCase().replace(token.toUpperCase(), token))).status).toBe(200);
    // A wrong verb is answered outside the route (405), and its path is logged too.
    expect((await api.post(byToken, {})).status).toBe(405);
    const unknown = `${'Z'.repeat(43)}`;
    expect((await api.get(`/user_management/invitations/by_token/${unknown}`)).status).toBe(404);
    const metrics = await new HttpClient(own.url, { Authorization: `Bearer ${adminToken}` }).get('/metrics');
    expect(metrics.status).toBe(200);

    const lines = out.lines.slice(before);
    const text = lines.join('\n');
    for (const secret of [token, unknown]) {
      expect(text).not.toContain(secret);
      expect(metrics.text).not.toContain(secret);
    }
    const paths = lines
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg === 'request' && /by_token/i.test(entry.path))
      .map((entry) => [entry.method, entry.route, entry.path, entry.status]);
    const template = '/user_management/invitations/by_token/{token}';
    expect(paths).toEqual([
      ['GET', template, '/user_management/invitations/by_token/[redacted]', 200],
      ['GET', template, '/user_management/invitations/by_token/[redacted]/', 200],
      ['GET', template, '/USER_MANAGEMENT/INVITATIONS/BY_TOKEN/[redacted]', 200],
      ['POST', 'unmatched', '/user_management/invitations/by_token/[redacted]', 405],
      ['GET', template, '/user_management/invitations/by_token/[redacted]', 404],
    ]);
    expect(metrics.text).toContain(`route="${template}"`);
  });
});
