import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
  webcrypto,
} from 'node:crypto';
import type { PublicRsaJwk } from '@atrium/db';
import type { X509CertificateCreateSelfSignedParams } from '@peculiar/x509';
import { lazy } from '../lib/lazy.ts';

/**
 * @peculiar/x509 (and the reflect-metadata it needs) loads with the first key generated: a
 * process serving keys it already has never pays its heap
 * (bench/README.md, "The fifteenth session": RSS).
 */
export const loadX509 = lazy(async () => {
  await import('reflect-metadata');
  const module = await import('@peculiar/x509');
  module.cryptoProvider.set(webcrypto as unknown as Crypto);
  return module;
});

const RSA = {
  name: 'RSASSA-PKCS1-v1_5',
  hash: 'SHA-256',
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
} as const;

export interface KeyMaterial {
  publicJwk: PublicRsaJwk;
  /** Base64 DER of the self-signed certificate (an `x5c` entry). */
  certificate: string;
  /** base64url(SHA-256(DER certificate)): the `x5t#S256`. */
  thumbprint: string;
  /** PKCS#8 DER of the private key (encrypt before storing). */
  privateKeyDer: Buffer;
}

/**
 * A fresh RSA-2048 key pair and a self-signed X.509 certificate for it (subject `CN=<kid>`,
 * valid ten years; the JWKS retires keys long before that).
 */
export async function generateKeyMaterial(kid: string, now: Date): Promise<KeyMaterial> {
  const keys = (await webcrypto.subtle.generateKey(RSA, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const { X509CertificateGenerator } = await loadX509();
  const cert = await X509CertificateGenerator.createSelfSigned({
    serialNumber: randomBytes(16)
      .toString('hex')
      .replace(/^[89a-f]/, '1'),
    name: `CN=${kid}`,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + 10 * 365 * 86_400_000),
    keys: keys as unknown as X509CertificateCreateSelfSignedParams['keys'],
    signingAlgorithm: RSA,
  });
  const der = Buffer.from(cert.rawData);
  const jwk = await webcrypto.subtle.exportKey('jwk', keys.publicKey);
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return {
    publicJwk: { kty: 'RSA', n: jwk.n as string, e: jwk.e as string },
    certificate: der.toString('base64'),
    thumbprint: createHash('sha256').update(der).digest('base64url'),
    privateKeyDer: Buffer.from(pkcs8),
  };
}

/**
 * AES-256-GCM under the master key, bound to `context` (a row id, so sealed values cannot be
 * swapped between rows): `v1.<iv>.<tag>.<ciphertext>`, base64url parts. The one encryption at
 * rest: private signing keys and webhook secrets both use it.
 */
export function seal(masterKey: Buffer, context: string, plaintext: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
  cipher.setAAD(Buffer.from(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), ciphertext]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

/**
 * A 32-byte key for one purpose (`purpose` names it: a signed link's HMAC), derived from the
 * master key by HKDF-SHA-256, so no purpose ever uses the master key itself.
 */
export function deriveKey(masterKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), `atrium:${purpose}`, 32));
}

/** True for a value `seal` made (its format, not whether it opens). */
export function isSealed(value: string): boolean {
  return /^v1\.[\w-]+\.[\w-]+\.[\w-]*$/.test(value);
}

/** Opens a `seal`ed value; `what` names it in errors (never the value itself). */
export function unseal(masterKey: Buffer, context: string, sealed: string, what: string): Buffer {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error(`${what} has an unknown format.`);
  const decipher = createDecipheriv('aes-256-gcm', masterKey, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
  } catch {
    throw new Error(`${what} cannot be decrypted: is ATRIUM_MASTER_KEY the key it was made with?`);
  }
}

/** A private signing key at rest, bound to its key id. */
export function encryptPrivateKey(masterKey: Buffer, kid: string, der: Buffer): string {
  return seal(masterKey, kid, der);
}

export function decryptPrivateKey(masterKey: Buffer, kid: string, sealed: string): KeyObject {
  const der = unseal(masterKey, kid, sealed, `Signing key ${kid}`);
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

export function publicKeyOf(jwk: PublicRsaJwk): KeyObject {
  return createPublicKey({ key: { ...jwk }, format: 'jwk' });
}

/**
 * True when 32 bytes are plainly not random: few distinct bytes, a short repeating pattern, or
 * a counting sequence. (32 random bytes have ~30 distinct values and ~30 distinct steps.)
 */
function lacksEntropy(bytes: Buffer): boolean {
  const distinct = new Set(bytes).size;
  const steps = new Set(bytes.subarray(1).map((b, i) => (b - (bytes[i] as number)) & 0xff)).size;
  let period = 1;
  while (period <= 16 && !bytes.every((b, i) => b === bytes[i % period])) period += 1;
  return distinct < 16 || steps < 16 || period <= 16;
}

/** Parses a master key: 32 random bytes as 64 hex characters or base64/base64url. */
export function parseMasterKey(raw: string): Buffer {
  const value = raw.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (bytes.length !== 32) {
    throw new Error('ATRIUM_MASTER_KEY must be 32 bytes, as 64 hex characters or base64 (openssl rand -base64 32).');
  }
  if (lacksEntropy(bytes)) {
    throw new Error(
      'ATRIUM_MASTER_KEY is not random (repeated or patterned bytes); generate one with: openssl rand -base64 32.',
    );
  }
  return bytes;
}
