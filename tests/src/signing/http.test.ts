import { createHash, createPublicKey, X509Certificate } from 'node:crypto';
import { signingKeys } from '@atrium/db';
import { signingKeyCache, signToken, TOKEN_KINDS } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { adminCaller, makeMember, makeOrganization } from '../helpers/tokens.ts';
import { HttpClient, newEnvironment, TEST_ISSUER, type TestEnvironment } from '../helpers/world.ts';

const anonymous = (env: TestEnvironment) => new HttpClient(env.world.url);

async function clientToken(env: TestEnvironment): Promise<string> {
  const organizationId = await makeOrganization(env);
  const userId = await makeMember(env, organizationId);
  const res = await env.http.post('/client/token', { organization_id: organizationId, user_id: userId });
  expect(res.status).toBe(201);
  return res.body.token;
}

describe('GET /sso/jwks/:clientId', () => {
  it('publishes RSA keys whose certificate, modulus and thumbprint agree, with nothing private', async () => {
    const env = await newEnvironment();
    const res = await anonymous(env).get(`/sso/jwks/${env.clientId}`);
    expect(res.status).toBe(200);
    expect(res.body.keys).toHaveLength(1);
    for (const key of res.body.keys) {
      expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use', 'x5c', 'x5t#S256']);
      expect(key).toMatchObject({ alg: 'RS256', kty: 'RSA', use: 'sig' });
      expect(key.kid).toMatch(/^key_[0-9A-HJKMNP-TV-Z]{26}$/);
      for (const privateMember of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(privateMember);
      const der = Buffer.from(key.x5c[0], 'base64');
      const certificate = new X509Certificate(der);
      const fromCertificate = certificate.publicKey.export({ format: 'jwk' });
      expect(fromCertificate.n).toBe(key.n);
      expect(fromCertificate.e).toBe(key.e);
      expect(createHash('sha256').update(der).digest('base64url')).toBe(key['x5t#S256']);
      expect(certificate.verify(createPublicKey({ key: { kty: 'RSA', n: key.n, e: key.e }, format: 'jwk' }))).toBe(
        true,
      );
      expect(Buffer.from(key.n, 'base64url').length).toBe(256); // RSA-2048
    }
  });

  it('needs no API key, is cacheable and answers 304 to a matching If-None-Match', async () => {
    const env = await newEnvironment();
    const first = await anonymous(env).get(`/sso/jwks/${env.clientId}`);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('public, max-age=300');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await anonymous(env).get(`/sso/jwks/${env.clientId}`);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.text).toBe(first.text);
    const conditional = await anonymous(env).get(`/sso/jwks/${env.clientId}`, { 'If-None-Match': etag as string });
    expect(conditional.status).toBe(304);
    expect(conditional.text).toBe('');
    const stale = await anonymous(env).get(`/sso/jwks/${env.clientId}`, { 'If-None-Match': '"other"' });
    expect(stale.status).toBe(200);
  });

  it('answers from memory after the first load until a rotation in this process clears it', async () => {
    const env = await newEnvironment();
    const first = await anonymous(env).get(`/sso/jwks/${env.clientId}`);
    const kid = first.body.keys[0].kid;
    // Retire the key behind the cache's back: the served set does not change (no database read).
    await env.deps.db
      .update(signingKeys)
      .set({ retiresAt: new Date(Date.now() - 1000) })
      .where(eq(signingKeys.id, kid));
    const cached = await anonymous(env).get(`/sso/jwks/${env.clientId}`);
    expect(cached.text).toBe(first.text);
    // A rotation through this process invalidates the entry: the next answer is reloaded.
    const admin = await adminCaller();
    const rotated = await admin.signingKeys.rotate({ environment: env.environmentId, activate_after_seconds: 0 });
    const reloaded = await anonymous(env).get(`/sso/jwks/${env.clientId}`);
    expect(reloaded.body.keys.map((k: { kid: string }) => k.kid)).toEqual([rotated.kid]);
    expect(reloaded.headers.get('etag')).not.toBe(first.headers.get('etag'));
  });

  it('answers 404 for an unknown client', async () => {
    const env = await newEnvironment();
    const res = await anonymous(env).get('/sso/jwks/client_01HZZZZZZZZZZZZZZZZZZZZZZZ');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'entity_not_found' });
  });

  it('serves each environment its own keys', async () => {
    const a = await newEnvironment();
    const b = await newEnvironment();
    const ja = await anonymous(a).get(`/sso/jwks/${a.clientId}`);
    const jb = await anonymous(b).get(`/sso/jwks/${b.clientId}`);
    expect(ja.body.keys[0].kid).not.toBe(jb.body.keys[0].kid);
    const token = await clientToken(a);
    await expect(jwtVerify(token, createLocalJWKSet(jb.body))).rejects.toThrow();
  });

  it('keeps old tokens verifiable across a rotation; new tokens carry the new kid once it is active', async () => {
    const env = await newEnvironment();
    const admin = await adminCaller();
    const before = await clientToken(env);
    const oldKid = decodeProtectedHeader(before).kid;

    // Default delay: the new key is published at once but does not sign yet.
    const pending = await admin.signingKeys.rotate({ environment: env.environmentId });
    const published = await anonymous(env).get(`/sso/jwks/${env.clientId}`);
    expect(published.body.keys.map((k: { kid: string }) => k.kid).sort()).toEqual([oldKid, pending.kid].sort());
    expect(decodeProtectedHeader(await clientToken(env)).kid).toBe(oldKid);

    // A rotation that activates at once: new tokens use it, the earlier keys stay published.
    const rotated = await admin.signingKeys.rotate({ environment: env.environmentId, activate_after_seconds: 0 });
    const after = await clientToken(env);
    expect(decodeProtectedHeader(after).kid).toBe(rotated.kid);
    const jwks = createLocalJWKSet((await anonymous(env).get(`/sso/jwks/${env.clientId}`)).body);
    for (const token of [before, after]) {
      const audience = TOKEN_KINDS.client.audience(env.clientId);
      const { payload } = await jwtVerify(token, jwks, { issuer: TEST_ISSUER, audience });
      expect(payload.aud).toBe(audience);
    }
    // The latest rotation wins: the earlier, still-pending key never takes over when its time
    // comes (the worker's clock moved 10 minutes on; tests of a worker run one at a time).
    const realNow = env.deps.now;
    const later = new Date(Date.now() + 10 * 60_000);
    env.deps.now = () => later;
    try {
      signingKeyCache(env.deps).delete(env.environmentId);
      const signed = await signToken(
        env.deps,
        { id: env.environmentId, clientId: env.clientId },
        'agent',
        { sub: 'x' },
        60,
      );
      expect(signed.kid).toBe(rotated.kid);
    } finally {
      env.deps.now = realNow;
      signingKeyCache(env.deps).delete(env.environmentId);
    }
    const keys = await admin.signingKeys.list({ environment: env.environmentId });
    expect(keys.find((k) => k.signing)?.kid).toBe(rotated.kid);
    expect(keys.every((k) => k.published)).toBe(true);
  });
});
