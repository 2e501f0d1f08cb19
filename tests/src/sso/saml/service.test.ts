import { inflateRawSync } from 'node:zlib';
import { events } from '@atrium/db';
import { consumeSamlResponse, hasAssertionId, SsoFailure, samlMetadataXml, startSaml } from '@atrium/routers';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  b64,
  type SamlSetup,
  samlResponseXml,
  samlSetup,
  sign,
  startTestIdp,
  testClock,
} from '../../helpers/saml-idp.ts';

const clock = testClock();
let idp: Awaited<ReturnType<typeof startTestIdp>>;

beforeAll(async () => {
  idp = await startTestIdp(clock);
  // The first configuration loads @peculiar/x509 and makes the first key pair: not a test's time.
  await samlSetup(idp, clock);
});
afterAll(async () => {
  await idp.close();
});

async function refusal(promise: Promise<unknown>): Promise<SsoFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SsoFailure);
  return error as SsoFailure;
}

describe('startSaml', () => {
  it('builds an HTTP-Redirect AuthnRequest to the IdP with RelayState = the authorization id', async () => {
    const setup = await samlSetup(idp, clock);
    const { url, samlRequestId } = await startSaml(setup.scope, await setup.row(), 'sso_authorization_01TEST');
    const parsed = new URL(url);
    expect(`${parsed.origin}${parsed.pathname}`).toBe(idp.ssoUrl);
    expect(parsed.searchParams.get('RelayState')).toBe('sso_authorization_01TEST');
    expect(parsed.searchParams.get('Signature')).toBeNull();
    const xml = inflateRawSync(Buffer.from(parsed.searchParams.get('SAMLRequest') ?? '', 'base64')).toString();
    expect(xml).toContain(`ID="${samlRequestId}"`);
    expect(xml).toContain(`AssertionConsumerServiceURL="${setup.sp.acsUrl}"`);
    expect(xml).toContain(`>${setup.sp.entityId}</saml:Issuer>`);
    expect(samlRequestId).toMatch(/^_[0-9a-f]{40}$/);
  });

  it('signs the request with the SP key when the connection signs requests', async () => {
    const setup = await samlSetup(idp, clock, { sign_requests: true });
    const { url } = await startSaml(setup.scope, await setup.row(), 'sso_authorization_01SIGNED', 'ada@example.com');
    const parsed = new URL(url);
    expect(parsed.searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    expect(parsed.searchParams.get('Signature')).toMatch(/^[A-Za-z0-9+/=]{300,}$/);
    expect(parsed.searchParams.get('login_hint')).toBe('ada@example.com');
  });
});

describe('consumeSamlResponse', () => {
  async function signIn(setup: SamlSetup) {
    const { samlRequestId } = await startSaml(setup.scope, await setup.row(), 'sso_authorization_01X');
    return { samlRequestId };
  }

  it('accepts the loopback IdP response (response and assertion signed) and maps the person', async () => {
    const setup = await samlSetup(idp, clock);
    const { samlRequestId } = await signIn(setup);
    const xml = await idp.loginResponse(
      setup.sp,
      { email: 'Grace@Example.com', firstName: 'Grace', lastName: 'Hopper', groups: ['Navy'] },
      samlRequestId,
    );
    expect(xml.match(/<ds:Signature[ >]/g)?.length).toBe(2);
    const identity = await consumeSamlResponse(
      setup.scope,
      await setup.row(),
      { SAMLResponse: b64(xml) },
      { samlRequestId },
    );
    expect(identity).toEqual({
      idpId: 'Grace@Example.com',
      email: 'grace@example.com',
      firstName: 'Grace',
      lastName: 'Hopper',
      name: 'Grace Hopper',
      groups: ['Navy'],
      customAttributes: {},
      rawAttributes: { email: 'Grace@Example.com', firstName: 'Grace', lastName: 'Hopper', groups: 'Navy' },
    });
    const assertionId = /<saml:Assertion ID="([^"]+)"/.exec(xml)?.[1] ?? '';
    expect(await hasAssertionId(setup.env.deps.db, setup.connectionId, assertionId)).toBe(true);
  });

  it.each(['assertion', 'response', 'both'] as const)('accepts a response with the %s signed', async (signing) => {
    const setup = await samlSetup(idp, clock);
    const { samlRequestId } = await signIn(setup);
    const xml = sign(samlResponseXml(setup.fields(samlRequestId)), signing, idp.key);
    const identity = await consumeSamlResponse(
      setup.scope,
      await setup.row(),
      { SAMLResponse: b64(xml) },
      { samlRequestId },
    );
    expect(identity.email).toBe('ada@example.com');
    expect(identity.groups).toEqual(['Engineering', 'Admins']);
  });

  it('refuses a response where nothing is signed, and remembers nothing', async () => {
    const setup = await samlSetup(idp, clock);
    const { samlRequestId } = await signIn(setup);
    const fields = setup.fields(samlRequestId, { assertionId: '_unsigned1' });
    const failure = await refusal(
      consumeSamlResponse(
        setup.scope,
        await setup.row(),
        { SAMLResponse: b64(samlResponseXml(fields)) },
        { samlRequestId },
      ),
    );
    expect(failure.reason).toBe('invalid_signature');
    expect(await hasAssertionId(setup.env.deps.db, setup.connectionId, '_unsigned1')).toBe(false);
  });

  it('maps custom attributes and a mapping that names other attributes', async () => {
    const setup = await samlSetup(idp, clock, {
      attribute_mapping: { idp_id: 'uid', email: 'mailPrimary', groups: 'teams', custom: { department: 'dept' } },
    });
    const { samlRequestId } = await signIn(setup);
    const fields = setup.fields(samlRequestId, {
      attributes: { uid: '00u1', mailPrimary: 'ada@corp.example', teams: ['a', 'b'], dept: 'R&D', email: 'x@y.z' },
    });
    const xml = sign(samlResponseXml(fields), 'assertion', idp.key);
    const identity = await consumeSamlResponse(
      setup.scope,
      await setup.row(),
      { SAMLResponse: b64(xml) },
      { samlRequestId },
    );
    expect(identity.idpId).toBe('00u1');
    expect(identity.email).toBe('ada@corp.example');
    expect(identity.groups).toEqual(['a', 'b']);
    expect(identity.customAttributes).toEqual({ department: 'R&D' });
  });

  it('refuses a response without an e-mail address', async () => {
    const setup = await samlSetup(idp, clock);
    const { samlRequestId } = await signIn(setup);
    const fields = setup.fields(samlRequestId, { nameId: 'opaque-id-1', attributes: { firstName: 'Ada' } });
    const xml = sign(samlResponseXml(fields), 'assertion', idp.key);
    const failure = await refusal(
      consumeSamlResponse(setup.scope, await setup.row(), { SAMLResponse: b64(xml) }, { samlRequestId }),
    );
    expect(failure.reason).toBe('missing_attribute');
  });

  it('refuses garbage and a document that is not a Response', async () => {
    const setup = await samlSetup(idp, clock);
    const row = await setup.row();
    for (const SAMLResponse of ['', b64('not xml <'), b64('<foo/>'), b64('<!DOCTYPE x><x/>')]) {
      const failure = await refusal(consumeSamlResponse(setup.scope, row, { SAMLResponse }, { samlRequestId: '_x' }));
      expect(failure.reason).toBe('invalid_response');
    }
  });
});

describe('samlMetadataXml', () => {
  it('names the SP entity id and the ACS, and no certificate while requests are unsigned', async () => {
    const setup = await samlSetup(idp, clock);
    const xml = await samlMetadataXml(setup.env.deps, await setup.row());
    expect(xml).toContain(`entityID="${setup.sp.entityId}"`);
    expect(xml).toContain(`Location="${setup.sp.acsUrl}"`);
    expect(xml).toContain('AuthnRequestsSigned="false"');
    expect(xml).not.toContain('X509Certificate');
  });

  it('publishes the SP signing certificate when the connection signs requests', async () => {
    const setup = await samlSetup(idp, clock, { sign_requests: true });
    const row = await setup.row();
    const xml = await samlMetadataXml(setup.env.deps, row);
    expect(xml).toContain(`entityID="${setup.sp.entityId}"`);
    expect(xml).toContain(`Location="${setup.sp.acsUrl}"`);
    const der = (row.samlSpCertificate ?? '').replace(/-----[A-Z ]+-----|\s/g, '');
    expect(der.length).toBeGreaterThan(500);
    expect(xml.replace(/\s/g, '')).toContain(der);
    expect(xml).toContain('AuthnRequestsSigned="true"');
    expect(xml).not.toContain('PRIVATE');
  });
});

describe('configureSamlConnection', () => {
  it('stores the IdP of the metadata, its certificate with validity and fingerprint, and a sealed SP key', async () => {
    const setup = await samlSetup(idp, clock);
    const row = await setup.row();
    expect(row.samlIdpEntityId).toBe(idp.entityId);
    expect(row.samlIdpSsoUrl).toBe(idp.ssoUrl);
    expect(row.samlIdpCertificates).toEqual([
      {
        pem: expect.stringContaining('-----BEGIN CERTIFICATE-----'),
        fingerprint_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        not_before: new Date(clock.at.getTime() - 86_400_000).toISOString(),
        not_after: new Date(clock.at.getTime() + 365 * 86_400_000).toISOString(),
      },
    ]);
    expect(row.samlSpPrivateKeySealed).toMatch(/^v1\./);
    expect(row.samlSpPrivateKeySealed).not.toContain('PRIVATE');
    const updated = await setup.env.deps.db
      .select()
      .from(events)
      .where(and(eq(events.environmentId, setup.env.environmentId), eq(events.event, 'connection.updated')));
    expect(updated).toHaveLength(1);
    expect(JSON.stringify(updated[0]?.data)).not.toContain('v1.');
  });
});
