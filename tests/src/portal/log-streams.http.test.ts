import { type AuditLogStreamType, auditLogStreams } from '@atrium/db';
import { portalSessionOfCookie, savePortalLogStream } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { clientSetup } from '../helpers/client.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { adminCaller } from '../helpers/tokens.ts';
import { getWorld, newEnvironment, TEST_ISSUER, type TestEnvironment } from '../helpers/world.ts';

// The admin portal's log_streams intent (issue #38): the organization's IT admin sets up its one
// log stream alone (one of six destinations), sees its state, pauses, resumes and removes it; the
// secrets are sealed in the row and never shown again. The AdminPortalAuditLogStreaming widget's
// route reads the same stream.

beforeAll(() => getWorld());

const STREAM = '/_widgets/admin-portal/audit-log-stream';
const SCOPE = 'widgets:audit-log-streaming:manage';

async function newOrganization(env: TestEnvironment, name = 'Acme') {
  return (await env.http.post('/organizations', { name })).body.id as string;
}

const storedStreams = (env: TestEnvironment) =>
  env.deps.db.select().from(auditLogStreams).where(eq(auditLogStreams.environmentId, env.environmentId));

async function openLink(env: TestEnvironment, link: string) {
  const url = new URL(link);
  expect(url.origin).toBe(new URL(TEST_ISSUER).origin);
  const res = await fetch(`${env.world.url}${url.pathname}${url.search}`, { redirect: 'manual' });
  return { res, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '' };
}

/** A portal session of `intent` (log_streams by default) for an organization: cookie, CSRF token and the page's calls. */
async function portalSession(env: TestEnvironment, organizationId?: string, intent = 'log_streams') {
  const organization = organizationId ?? (await newOrganization(env));
  const { link } = await sdkFor(env).adminPortal.generateLink({ organization, intent: intent as 'sso' });
  const { res, cookie } = await openLink(env, link);
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe(`/portal/${intent}`);
  const page = await fetch(`${env.world.url}/portal/${intent}`, { headers: { cookie } });
  const html = await page.text();
  const csrf = /name="atrium-portal-csrf" content="([^"]+)"/.exec(html)?.[1] ?? '';
  const auth = { cookie, 'X-CSRF-Token': csrf };
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = auth) => {
    const r = await fetch(`${env.world.url}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, text, body: text ? JSON.parse(text) : undefined };
  };
  const save = (body: unknown, headers?: Record<string, string>) =>
    call('POST', '/portal/session/log_stream', body, headers);
  const status = async () => (await call('GET', '/portal/session/status', undefined, { cookie })).body;
  const token = async () => (await call('POST', '/portal/session/token')).body.token as string;
  return { organization, cookie, csrf, page, html, call, save, status, token };
}

/** One valid body per destination type, and its secret values (which no answer may carry). */
const VALID: Record<AuditLogStreamType, { config: object; credentials: object; secrets: string[] }> = {
  GenericHttps: {
    config: { url: 'https://siem.example.com/ingest' },
    credentials: { headers: { Authorization: 'Bearer generic-secret-123' } },
    secrets: ['generic-secret-123'],
  },
  Datadog: { config: { site: 'datadoghq.eu' }, credentials: { api_key: 'dd-secret-456' }, secrets: ['dd-secret-456'] },
  Splunk: {
    config: { url: 'https://splunk.example.com:8088', index: 'audit' },
    credentials: { token: 'splunk-secret-789' },
    secrets: ['splunk-secret-789'],
  },
  S3: {
    config: { bucket: 'acme-audit', region: 'eu-west-1', prefix: 'atrium/' },
    credentials: { access_key_id: 'AKIAEXAMPLE', secret_access_key: 's3-secret-abc' },
    secrets: ['AKIAEXAMPLE', 's3-secret-abc'],
  },
  GoogleCloudStorage: {
    config: { bucket: 'acme-audit-gcs' },
    credentials: { access_key_id: 'GOOGEXAMPLE', secret_access_key: 'gcs-secret-def' },
    secrets: ['GOOGEXAMPLE', 'gcs-secret-def'],
  },
  AzureSentinel: {
    config: { workspace_id: 'a1b2c3d4-workspace', log_type: 'AtriumAudit' },
    credentials: { shared_key: 'azure-secret-ghi' },
    secrets: ['azure-secret-ghi'],
  },
};

/** One invalid body per type, and the field the 422 must name. */
const INVALID: [AuditLogStreamType, object, string][] = [
  ['GenericHttps', { config: { url: 'ftp://siem.example.com' }, credentials: {} }, 'config.url'],
  ['Datadog', { config: { site: 'datadoghq.moon' }, credentials: { api_key: 'k' } }, 'config.site'],
  ['Splunk', { config: { url: 'https://splunk.example.com' }, credentials: {} }, 'credentials.token'],
  ['S3', { config: { bucket: 'Bad_Bucket', region: 'eu-west-1' }, credentials: VALID.S3.credentials }, 'config.bucket'],
  [
    'GoogleCloudStorage',
    { config: { bucket: 'acme-audit' }, credentials: { access_key_id: 'x' } },
    'credentials.secret_access_key',
  ],
  ['AzureSentinel', { config: {}, credentials: { shared_key: 'k' } }, 'config.workspace_id'],
];

describe('the log_streams portal page', () => {
  it('opens with a link of intent log_streams, bound to the organization', async () => {
    const env = await newEnvironment();
    const organization = await newOrganization(env, 'Stream Corp');
    const s = await portalSession(env, organization);
    expect(s.page.status).toBe(200);
    expect(s.html).toContain('<title>Stream Corp · Log streams</title>');
    expect(s.html).toContain('<meta name="atrium-portal-intent" content="log_streams" />');
    expect(s.html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(await s.status()).toMatchObject({ intent: 'log_streams', log_stream: null });
    // The session opens its own page only.
    expect((await fetch(`${env.world.url}/portal/sso`, { headers: { cookie: s.cookie } })).status).toBe(401);
  });

  it.each(Object.keys(VALID) as AuditLogStreamType[])(
    'sets up a %s stream: sealed secrets, never shown back',
    async (type) => {
      const env = await newEnvironment();
      const s = await portalSession(env);
      const { config, credentials, secrets } = VALID[type];
      const saved = await s.save({ type, config, credentials });
      expect(saved.status).toBe(200);
      expect(saved.body).toMatchObject({
        object: 'log_stream',
        organization_id: s.organization,
        type,
        state: 'active',
        config,
        last_error: null,
        last_delivered_event_id: null,
      });
      expect(saved.body.credentials_set).toEqual(Object.keys(credentials));
      const [row] = await storedStreams(env);
      expect(row).toMatchObject({ organizationId: s.organization, type, state: 'active', attempts: 0 });
      expect(row?.credentials).toMatch(/^v1\./);
      const status = await s.status();
      expect(status.log_stream).toEqual(saved.body);
      const widget = await clientSetupWithScope(env, s.organization);
      const read = await widget.http.get(STREAM);
      expect(read.status).toBe(200);
      expect(read.body).toEqual({ id: row?.id, state: 'Active', type, auditLogTrailId: s.organization });
      for (const secret of secrets) {
        for (const text of [saved.text, JSON.stringify(status), read.text, JSON.stringify(row)]) {
          expect(text).not.toContain(secret);
        }
      }
    },
  );

  it.each(INVALID)(
    'refuses a %s stream with a wrong field (422 naming %j), storing nothing',
    async (type, body, field) => {
      const env = await newEnvironment();
      const s = await portalSession(env);
      const res = await s.save({ type, ...body });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('invalid_request_parameters');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(await storedStreams(env)).toHaveLength(0);
    },
  );

  it.each([
    [{ type: 'Snowflake', config: {} }, 'type'],
    [{ config: { url: 'https://x.example.com' } }, 'type'],
    [{ type: 'GenericHttps' }, 'config.url'],
  ])('refuses %j with 422 naming %s', async (body, field) => {
    const env = await newEnvironment();
    const s = await portalSession(env);
    const res = await s.save(body);
    expect(res.status).toBe(422);
    expect(res.body.errors[0].field).toBe(field);
    expect(await storedStreams(env)).toHaveLength(0);
  });

  it('refuses a destination URL on a private address unless private addresses are allowed', async () => {
    const env = await newEnvironment();
    const s = await portalSession(env);
    const live = await portalSessionOfCookie(env.deps, s.cookie.replace('atrium_portal=', ''));
    if (!live) throw new Error('no live session');
    const strict = { ...env.deps, config: { ...env.deps.config, webhooksAllowPrivate: false } };
    for (const [type, config, field] of [
      ['GenericHttps', { url: 'http://127.0.0.1:9/ingest' }, 'config.url'],
      ['Splunk', { url: 'https://10.0.0.8:8088' }, 'config.url'],
      ['S3', { bucket: 'acme', region: 'us-east-1', endpoint: 'https://[::1]:9000' }, 'config.endpoint'],
      ['Datadog', { site: 'datadoghq.com', url: 'https://169.254.169.254/' }, 'config.url'],
    ] as const) {
      const body = { type, config, credentials: VALID[type].credentials };
      await expect(savePortalLogStream(strict, live, body)).rejects.toMatchObject({
        status: 422,
        errors: [expect.objectContaining({ field, message: expect.stringMatching(/private/) })],
      });
    }
    expect(await storedStreams(env)).toHaveLength(0);
    // Allowed (WEBHOOKS_ALLOW_PRIVATE=true, as in these tests): stored.
    const allowed = await s.save({ type: 'GenericHttps', config: { url: 'https://127.0.0.1:9/ingest' } });
    expect(allowed.status).toBe(200);
    expect(await storedStreams(env)).toHaveLength(1);
  });

  it('replaces the stream: same destination changes nothing, a new one resets attempts and keeps the cursor', async () => {
    const env = await newEnvironment();
    const s = await portalSession(env);
    const first = await s.save({ type: 'Splunk', ...VALID.Splunk });
    const id = first.body.id;
    // The worker's state after failures, and a cursor.
    await env.deps.db
      .update(auditLogStreams)
      .set({
        state: 'error',
        attempts: 7,
        lastError: 'HTTP 503',
        lastStatusCode: 503,
        deliveredThrough: 'audit_log_event_X',
      })
      .where(eq(auditLogStreams.id, id));
    const same = await s.save({ type: 'Splunk', config: VALID.Splunk.config });
    expect(same.body).toMatchObject({ id, state: 'error', last_error: 'HTTP 503', credentials_set: ['token'] });
    // Same type without credentials keeps the stored secret; a changed URL resets the attempt state.
    const moved = await s.save({ type: 'Splunk', config: { url: 'https://splunk2.example.com' } });
    expect(moved.body).toMatchObject({
      id,
      state: 'active',
      last_error: null,
      last_status_code: null,
      last_delivered_event_id: 'audit_log_event_X',
      credentials_set: ['token'],
    });
    const [row] = await storedStreams(env);
    expect(row).toMatchObject({ id, attempts: 0, config: { url: 'https://splunk2.example.com' } });
    // Another type needs its own credentials (422, the stream unchanged), then replaces it under the same id.
    const missing = await s.save({ type: 'Datadog', config: { site: 'datadoghq.com' } });
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].field).toBe('credentials.api_key');
    expect((await storedStreams(env))[0]?.type).toBe('Splunk');
    const dd = await s.save({ type: 'Datadog', ...VALID.Datadog });
    expect(dd.body).toMatchObject({ id, type: 'Datadog', credentials_set: ['api_key'] });
    expect(await storedStreams(env)).toHaveLength(1);
  });

  it('pauses, resumes and removes the stream', async () => {
    const env = await newEnvironment();
    const s = await portalSession(env);
    expect((await s.call('POST', '/portal/session/log_stream/pause')).status).toBe(404);
    await s.save({ type: 'Datadog', ...VALID.Datadog });
    const paused = await s.call('POST', '/portal/session/log_stream/pause');
    expect(paused.body.state).toBe('inactive');
    const widget = await clientSetupWithScope(env, s.organization);
    expect((await widget.http.get(STREAM)).body.state).toBe('Inactive');
    // A new destination keeps a paused stream paused.
    expect((await s.save({ type: 'Datadog', config: { site: 'datadoghq.com' } })).body.state).toBe('inactive');
    const resumed = await s.call('POST', '/portal/session/log_stream/resume');
    expect(resumed.body.state).toBe('active');
    expect((await s.call('DELETE', '/portal/session/log_stream')).status).toBe(204);
    expect(await storedStreams(env)).toHaveLength(0);
    expect((await s.status()).log_stream).toBeNull();
    expect((await widget.http.get(STREAM)).body).toEqual({});
    expect((await s.call('DELETE', '/portal/session/log_stream')).status).toBe(404);
  });

  it('refuses writes without the CSRF token, from another intent, and keeps organizations apart', async () => {
    const env = await newEnvironment();
    const a = await portalSession(env);
    const b = await portalSession(env);
    const noCsrf = await a.save({ type: 'Datadog', ...VALID.Datadog }, { cookie: a.cookie });
    expect(noCsrf.status).toBe(403);
    const anonymous = await a.save({ type: 'Datadog', ...VALID.Datadog }, {});
    expect(anonymous.status).toBe(403);
    expect(await storedStreams(env)).toHaveLength(0);
    const dsync = await portalSession(env, a.organization, 'dsync');
    const wrongIntent = await dsync.save({ type: 'Datadog', ...VALID.Datadog });
    expect(wrongIntent.status).toBe(403);
    expect((await dsync.status()).log_stream).toBeUndefined();
    expect(await storedStreams(env)).toHaveLength(0);
    // B's session sees and changes only B's stream.
    await a.save({ type: 'Datadog', ...VALID.Datadog });
    expect((await b.status()).log_stream).toBeNull();
    expect((await b.call('POST', '/portal/session/log_stream/pause')).status).toBe(404);
    expect((await b.call('DELETE', '/portal/session/log_stream')).status).toBe(404);
    const rows = await storedStreams(env);
    expect(rows).toMatchObject([{ organizationId: a.organization, state: 'active' }]);
    // The console reads it (read-only, no secret); another environment's organization is 404.
    const admin = await adminCaller();
    const seen = await admin.auditLogs.stream({
      environment: env.environmentId,
      organization_id: a.organization,
    });
    expect(seen).toMatchObject({ type: 'Datadog', state: 'active', credentials_set: ['api_key'] });
    expect(JSON.stringify(seen)).not.toContain('dd-secret-456');
    // Another environment's session neither.
    const other = await newEnvironment();
    const c = await portalSession(other);
    expect((await c.status()).log_stream).toBeNull();
  });
});

/** A widget token of a member of the organization whose role grants the log stream widget's scope. */
async function clientSetupWithScope(env: TestEnvironment, organizationId: string) {
  const made = await env.http.post('/authorization/roles', { slug: 'stream-manager', name: 'Stream manager' });
  if (made.status === 201) {
    const set = await env.http.put('/authorization/roles/stream-manager/permissions', { permissions: [SCOPE] });
    if (set.status !== 200) throw new Error(`role permissions: ${set.status} ${set.text}`);
  }
  return clientSetup(env, { organizationId, scopes: [SCOPE], roleSlug: 'stream-manager' });
}

describe('GET /_widgets/admin-portal/audit-log-stream (AdminPortalAuditLogStreaming)', () => {
  it('answers {} without a stream, the stream with one, and 403 without the scope', async () => {
    const env = await newEnvironment();
    const s = await portalSession(env);
    const member = await clientSetupWithScope(env, s.organization);
    expect(member.claims.permissions).toEqual([SCOPE]);
    const none = await member.http.get(STREAM);
    expect(none.status).toBe(200);
    expect(none.body).toEqual({});
    await s.save({ type: 'S3', ...VALID.S3 });
    const [row] = await storedStreams(env);
    await env.deps.db
      .update(auditLogStreams)
      .set({ state: 'error', lastError: 'HTTP 403 from the bucket', deliveredThrough: 'audit_log_event_Y' })
      .where(eq(auditLogStreams.id, row?.id ?? ''));
    expect((await member.http.get(STREAM)).body).toEqual({
      id: row?.id,
      state: 'Error',
      type: 'S3',
      errorMessage: 'HTTP 403 from the bucket',
      lastSyncedEventId: 'audit_log_event_Y',
      auditLogTrailId: s.organization,
    });
    // A member without the scope, and the portal page of another intent: 403 with a message.
    const other = await clientSetup(env, { organizationId: s.organization, scopes: ['widgets:sso:manage'] });
    const denied = await other.http.get(STREAM);
    expect(denied.status).toBe(403);
    expect(denied.body.message).toMatch(/widgets:audit-log-streaming:manage/);
    const dsync = await portalSession(env, s.organization, 'dsync');
    const dsyncToken = await dsync.token();
    const viaDsync = await fetch(`${env.world.url}${STREAM}`, { headers: { Authorization: `Bearer ${dsyncToken}` } });
    expect(viaDsync.status).toBe(403);
    // The log_streams page's own token reads it; another organization's member sees its own (none).
    const pageToken = await s.token();
    const viaPage = await fetch(`${env.world.url}${STREAM}`, { headers: { Authorization: `Bearer ${pageToken}` } });
    expect(((await viaPage.json()) as { id: string }).id).toBe(row?.id);
    const elsewhere = await clientSetupWithScope(env, await newOrganization(env));
    expect((await elsewhere.http.get(STREAM)).body).toEqual({});
    // No token: 403.
    expect((await fetch(`${env.world.url}${STREAM}`)).status).toBe(403);
  });

  it('generate-link with intent log_streams gives a portal link to the setup page (REST, tRPC)', async () => {
    const env = await newEnvironment();
    const organization = await newOrganization(env);
    const member = await clientSetupWithScope(env, organization);
    const res = await member.http.post('/_widgets/admin-portal/generate-link?intent=log_streams');
    expect(res.status).toBe(201);
    const { res: opened } = await openLink(env, res.body.link);
    expect(opened.headers.get('location')).toBe('/portal/log_streams');
    const gql = await member.graphql('mutation { createAdminPortalLink(intent: LogStreams) { link intent } }');
    expect(gql.body.data.createAdminPortalLink.intent).toBe('LogStreams');
    // The log_streams page's own widget gets its own page back, never a new link.
    const s = await portalSession(env, organization);
    const own = await fetch(`${env.world.url}/_widgets/admin-portal/generate-link?intent=log_streams`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${await s.token()}`, 'WorkOS-Widgets-Version': '1' },
    });
    expect(((await own.json()) as { link: string }).link).toBe(`${TEST_ISSUER}/portal/log_streams`);
  });
});
