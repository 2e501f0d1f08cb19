import { connections, events } from '@atrium/db';
import { and, eq, like } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { startOidcIdp } from '../helpers/oidc-idp.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { getWorld, newEnvironment, TEST_ISSUER, type TestEnvironment } from '../helpers/world.ts';

// The admin portal's sso intent as a setup flow (issue #37): the IT admin starts a connection of
// a provider, gives the IdP's metadata (or the OIDC provider's discovery, client id and secret),
// and sees what to paste, the certificates and the test sign-in link; cookie + CSRF writes.

beforeAll(() => getWorld());

const METADATA = `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.portal.test/metadata">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>CERT</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.portal.test/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;

async function metadataXml(): Promise<string> {
  const { readFileSync } = await import('node:fs');
  const fixture = readFileSync(new URL('../connections/fixtures/idp-metadata.xml', import.meta.url), 'utf8');
  const cert = /<ds:X509Certificate>([^<]+)</.exec(fixture)?.[1] ?? '';
  return METADATA.replace('CERT', cert);
}

const stored = (env: TestEnvironment) =>
  env.deps.db.select().from(connections).where(eq(connections.environmentId, env.environmentId));
const connectionEvents = (env: TestEnvironment) =>
  env.deps.db
    .select()
    .from(events)
    .where(and(eq(events.environmentId, env.environmentId), like(events.event, 'connection.%')));

/** A portal session of `intent` for a new organization: cookie, CSRF token and the page's calls. */
async function session(env: TestEnvironment, intent: 'sso' | 'dsync' = 'sso') {
  const organization = (await env.http.post('/organizations', { name: 'Portal SSO' })).body.id as string;
  const { link } = await sdkFor(env).adminPortal.generateLink({ organization, intent });
  const url = new URL(link);
  const opened = await fetch(`${env.world.url}${url.pathname}${url.search}`, { redirect: 'manual' });
  const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const html = await (await fetch(`${env.world.url}/portal/${intent}`, { headers: { cookie } })).text();
  const csrf = /name="atrium-portal-csrf" content="([^"]+)"/.exec(html)?.[1] ?? '';
  const post = async (
    path: string,
    body: unknown,
    headers: Record<string, string> = { cookie, 'X-CSRF-Token': csrf },
  ) => {
    const res = await fetch(`${env.world.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const status = async () =>
    (await (await fetch(`${env.world.url}/portal/session/status`, { headers: { cookie } })).json()) as any;
  return { organization, cookie, csrf, post, status };
}

describe('the admin portal sso setup flow over HTTP', () => {
  it('starts a SAML connection, shows the SP facts, configures it from pasted metadata, then offers the test sign-in', async () => {
    const env = await newEnvironment();
    const s = await session(env);
    expect((await s.status()).connections).toEqual([]);

    const started = await s.post('/portal/session/sso', { provider: 'okta' });
    expect(started.status).toBe(201);
    const id = started.body.id as string;
    expect(started.body).toMatchObject({
      type: 'OktaSAML',
      state: 'inactive',
      configured: false,
      sp: {
        acs_url: `${TEST_ISSUER}/sso/saml/acs/${id}`,
        entity_id: `${TEST_ISSUER}/sso/saml/${id}`,
        metadata_url: `${TEST_ISSUER}/sso/saml/metadata/${id}`,
      },
      certificates: [],
      test_sign_in_url: null,
      test_sign_in_blocked: 'Add the identity provider first.',
    });

    const saved = await s.post(`/portal/session/sso/${id}`, { idp_metadata_xml: await metadataXml() });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      configured: true,
      idp: { entity_id: 'https://idp.portal.test/metadata', sso_url: 'https://idp.portal.test/sso' },
      certificates: [{ not_after: '2036-11-25T17:23:08.000Z', expired: false }],
      // No default redirect URI yet: the page says why there is no test link.
      test_sign_in_url: null,
      test_sign_in_blocked: expect.stringMatching(/default redirect URI/),
    });
    await env.http.post('/user_management/redirect_uris', { uri: 'https://app.portal.test/callback', default: true });
    const [shown] = (await s.status()).connections;
    const test = new URL(shown.test_sign_in_url);
    expect(`${test.origin}${test.pathname}`).toBe(`${TEST_ISSUER}/sso/authorize`);
    expect(Object.fromEntries(test.searchParams)).toEqual({
      client_id: env.clientId,
      connection: id,
      response_type: 'code',
      state: 'atrium_portal_test',
    });
    expect(await stored(env)).toEqual([
      expect.objectContaining({
        id,
        organizationId: s.organization,
        state: 'inactive',
        samlIdpSsoUrl: 'https://idp.portal.test/sso',
      }),
    ]);
  });

  it('configures a generic OIDC connection from the discovery endpoint, client id and secret (sealed, never shown)', async () => {
    const env = await newEnvironment();
    const s = await session(env);
    const idp = await startOidcIdp({ redirectUris: [] });
    try {
      const started = await s.post('/portal/session/sso', { provider: 'oidc' });
      expect(started.body).toMatchObject({
        type: 'GenericOIDC',
        sp: { redirect_uri: `${TEST_ISSUER}/sso/oidc/callback/${started.body.id}` },
      });
      const saved = await s.post(`/portal/session/sso/${started.body.id}`, {
        discovery_endpoint: idp.discoveryEndpoint,
        client_id: idp.clientId,
        client_secret: idp.clientSecret,
      });
      expect(saved.status).toBe(200);
      expect(saved.body.configured).toBe(true);
      expect(JSON.stringify(saved.body)).not.toContain(idp.clientSecret);
      expect(JSON.stringify(await s.status())).not.toContain(idp.clientSecret);
      const [row] = await stored(env);
      expect(row).toMatchObject({ oidcIssuer: idp.issuer, oidcClientId: idp.clientId });
    } finally {
      await idp.close();
    }
  });

  it.each([
    ['an unknown provider', '/portal/session/sso', { provider: 'ping' }, 422],
    [
      'bad metadata',
      'configure',
      { idp_metadata_xml: '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata"/>' },
      422,
    ],
    ['neither XML nor URL', 'configure', {}, 422],
    ['another organization connection', 'other', { idp_metadata_xml: METADATA }, 404],
  ])('refuses %s and changes nothing', async (_label, path, body, status) => {
    const env = await newEnvironment();
    const s = await session(env);
    const own = (await s.post('/portal/session/sso', { provider: 'saml' })).body.id as string;
    const other = await session(env);
    const theirs = (await other.post('/portal/session/sso', { provider: 'saml' })).body.id as string;
    const before = (await connectionEvents(env)).length;
    const target =
      path === 'configure' ? `/portal/session/sso/${own}` : path === 'other' ? `/portal/session/sso/${theirs}` : path;
    const res = await s.post(target, body);
    expect(res.status).toBe(status);
    expect(typeof res.body.message).toBe('string');
    expect((await stored(env)).map((c) => [c.id, c.samlIdpSsoUrl]).sort()).toEqual(
      [
        [own, null],
        [theirs, null],
      ].sort(),
    );
    expect((await connectionEvents(env)).length).toBe(before);
  });

  it('needs the CSRF token and an sso session', async () => {
    const env = await newEnvironment();
    const s = await session(env);
    const noCsrf = await s.post('/portal/session/sso', { provider: 'okta' }, { cookie: s.cookie });
    expect(noCsrf.status).toBe(403);
    const dsync = await session(env, 'dsync');
    const wrongIntent = await dsync.post('/portal/session/sso', { provider: 'okta' });
    expect(wrongIntent.status).toBe(403);
    expect((await dsync.status()).connections).toBeUndefined();
    expect(await stored(env)).toEqual([]);
  });
});
