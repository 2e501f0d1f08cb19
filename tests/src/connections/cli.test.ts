import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connections, events } from '@atrium/db';
import { and, eq, like } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { runAdminCli } from '../helpers/cli.ts';
import { startOidcIdp } from '../helpers/oidc-idp.ts';
import { adminTokenOf, makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment, TEST_ISSUER, type TestEnvironment } from '../helpers/world.ts';

const METADATA_FILE = new URL('./fixtures/idp-metadata.xml', import.meta.url).pathname;
const METADATA = readFileSync(METADATA_FILE, 'utf8');

async function cli(env: TestEnvironment, ...argv: string[]) {
  return runAdminCli(argv, { ATRIUM_URL: env.world.url, ATRIUM_ADMIN_TOKEN: await adminTokenOf() });
}

const create = (env: TestEnvironment, organizationId: string, type: string, ...flags: string[]) =>
  cli(
    env,
    'connections',
    'create',
    '--environment',
    env.environmentId,
    '--organization',
    organizationId,
    '--type',
    type,
    '--name',
    'SSO',
    ...flags,
    '--json',
  );

const rowsOf = (env: TestEnvironment) =>
  env.deps.db.select().from(connections).where(eq(connections.environmentId, env.environmentId));
const connectionEvents = (env: TestEnvironment) =>
  env.deps.db
    .select()
    .from(events)
    .where(and(eq(events.environmentId, env.environmentId), like(events.event, 'connection.%')))
    .orderBy(events.id);

function spFacts(id: string) {
  return {
    saml_acs_url: `${TEST_ISSUER}/sso/saml/acs/${id}`,
    saml_sp_entity_id: `${TEST_ISSUER}/sso/saml/${id}`,
    saml_sp_metadata_url: `${TEST_ISSUER}/sso/saml/metadata/${id}`,
  };
}

describe('npx atrium connections: SSO configuration', () => {
  it('create --type GenericSAML --saml-idp-metadata-file prints the id and the SP facts, and stores the IdP', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const run = await create(
      env,
      organizationId,
      'GenericSAML',
      '--saml-idp-metadata-file',
      METADATA_FILE,
      '--saml-sign-requests',
    );
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const body = run.json();
    expect(body).toMatchObject({
      object: 'connection',
      id: expect.stringMatching(/^conn_/),
      connection_type: 'GenericSAML',
      // Configured, it becomes active on its first successful sign-in.
      state: 'inactive',
      ...spFacts(body.id),
    });
    expect(body.options.signing_cert).toMatch(/^-----BEGIN CERTIFICATE-----/);
    // Nothing secret is printed.
    expect(run.out).not.toMatch(/PRIVATE KEY|sealed/i);

    const [row] = await rowsOf(env);
    expect(row).toMatchObject({
      id: body.id,
      samlIdpEntityId: 'https://idp.example.test/metadata',
      samlIdpSsoUrl: 'https://idp.example.test/sso',
      samlSignRequests: true,
      samlIdpInitiatedEnabled: false,
      samlSpCertificate: body.options.signing_cert,
    });
    expect(row?.samlIdpCertificates).toEqual([
      expect.objectContaining({ not_after: '2036-11-25T17:23:08.000Z', pem: expect.stringMatching(/^-----BEGIN/) }),
    ]);
    expect(row?.samlSpPrivateKeySealed).toBeTruthy();
    expect(row?.samlSpPrivateKeySealed).not.toMatch(/PRIVATE KEY/);
    expect((await connectionEvents(env)).map((e) => e.event)).toEqual(['connection.created', 'connection.updated']);

    // `get` prints the same facts again.
    const got = await cli(env, 'connections', 'get', '--connection', body.id, '--json');
    expect(got.json()).toMatchObject({ id: body.id, ...spFacts(body.id) });
  });

  it('configure --connection sets up an existing connection, from a metadata URL', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const plain = (await create(env, organizationId, 'OktaSAML')).json();
    // Without SSO flags, a connection is stored as before (active), and still shows its SP facts.
    expect(plain).toMatchObject({ state: 'active', ...spFacts(plain.id) });
    expect((await rowsOf(env))[0]?.samlIdpCertificates).toEqual([]);

    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' });
      res.end(METADATA);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metadata`;
      const run = await cli(
        env,
        'connections',
        'configure',
        '--connection',
        plain.id,
        '--saml-idp-metadata-url',
        url,
        '--saml-idp-initiated',
        '--json',
      );
      expect(run.err).toBe('');
      expect(run.json()).toMatchObject({ id: plain.id, ...spFacts(plain.id) });
      expect((await rowsOf(env))[0]).toMatchObject({
        samlIdpMetadataUrl: url,
        samlIdpEntityId: 'https://idp.example.test/metadata',
        samlIdpInitiatedEnabled: true,
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.each([
    [
      'metadata without an IdP',
      'GenericSAML',
      '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata"/>',
      /idp_metadata_xml/,
    ],
    ['SAML flags on an OAuth connection', 'GoogleOAuth', METADATA, /connection_type/],
  ])('refuses %s with a clear error and stores nothing', async (_label, type, xml, field) => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const file = join(tmpdir(), `atrium-metadata-${process.pid}-${Date.now()}.xml`);
    writeFileSync(file, xml);
    const run = await create(env, organizationId, type, '--saml-idp-metadata-file', file);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(field);
    expect(run.out).toBe('');
    expect(await rowsOf(env)).toEqual([]);
    expect(await connectionEvents(env)).toEqual([]);
  });

  it('refuses a metadata file it cannot read, before calling the server', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const run = await create(
      env,
      organizationId,
      'GenericSAML',
      '--saml-idp-metadata-file',
      '/nonexistent/metadata.xml',
    );
    expect(run.code).toBe(1);
    expect(run.err).toContain('cannot read /nonexistent/metadata.xml (ENOENT)');
    expect(await rowsOf(env)).toEqual([]);
    const nothing = await cli(env, 'connections', 'configure', '--connection', 'conn_01HZZZZZZZZZZZZZZZZZZZZZZZ');
    expect(nothing.code).toBe(1);
    expect(nothing.err).toContain('give the configuration');
  });

  it('create --type GenericOIDC with the discovery endpoint, client id and secret prints the redirect URI, never the secret', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const idp = await startOidcIdp({ redirectUris: [] });
    try {
      const run = await create(
        env,
        organizationId,
        'GenericOIDC',
        '--oidc-discovery-endpoint',
        idp.discoveryEndpoint,
        '--oidc-client-id',
        idp.clientId,
        '--oidc-client-secret',
        idp.clientSecret,
        '--oidc-scopes',
        'openid profile email groups',
      );
      expect(run.err).toBe('');
      expect(run.code).toBe(0);
      const body = run.json();
      expect(body).toMatchObject({ connection_type: 'GenericOIDC', state: 'inactive' });
      expect(body.oidc_redirect_uri).toBe(`${TEST_ISSUER}/sso/oidc/callback/${body.id}`);
      expect(body.saml_acs_url).toBeUndefined();
      expect(run.out).not.toContain(idp.clientSecret);
      const [row] = await rowsOf(env);
      expect(row).toMatchObject({
        oidcIssuer: idp.issuer,
        oidcClientId: idp.clientId,
        oidcScopes: ['openid', 'profile', 'email', 'groups'],
      });
      expect(row?.oidcClientSecretSealed).toBeTruthy();
      expect(row?.oidcClientSecretSealed).not.toContain(idp.clientSecret);

      // configure: the same flags on the existing connection; half of them is refused before the server.
      const again = await cli(
        env,
        'connections',
        'configure',
        '--connection',
        body.id,
        '--oidc-discovery-endpoint',
        idp.discoveryEndpoint,
        '--oidc-client-id',
        idp.clientId,
        '--json',
      );
      expect(again.err).toBe('');
      expect(again.json().oidc_redirect_uri).toBe(body.oidc_redirect_uri);
      const half = await cli(env, 'connections', 'configure', '--connection', body.id, '--oidc-client-id', 'x');
      expect(half.code).toBe(1);
      expect(half.err).toContain('OIDC needs --oidc-discovery-endpoint and --oidc-client-id');
    } finally {
      await idp.close();
    }
  });

  it('refuses an unreachable discovery endpoint and stores nothing', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const run = await create(
      env,
      organizationId,
      'GenericOIDC',
      '--oidc-discovery-endpoint',
      'http://127.0.0.1:1/.well-known/openid-configuration',
      '--oidc-client-id',
      'client',
    );
    expect(run.code).toBe(1);
    expect(run.err).toContain('discovery_endpoint');
    expect(await rowsOf(env)).toEqual([]);
    expect(await connectionEvents(env)).toEqual([]);
  });
});
