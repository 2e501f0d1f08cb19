import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Passwords, hashed with scrypt (node:crypto) into a PHC string
 * `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt b64>$<hash b64>`, so the cost can rise later and old
 * hashes still verify. N = 2^15, r = 8, p = 1 (OWASP's scrypt minimum is N = 2^17 at r = 8 for
 * interactive logins; 2^15 keeps a create under ~60 ms on a loaded 2-core host while staying
 * memory-hard at 32 MiB).
 */
const LOG_N = 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  // maxmem must cover 128 * N * r bytes, plus slack.
  const maxmem = 256 * (options.N ?? 1) * (options.r ?? 8);
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...options, maxmem }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** A new PHC string for `password`, with a fresh random salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await derive(password, salt, { N: 2 ** LOG_N, r: R, p: P });
  return `$scrypt$ln=${LOG_N},r=${R},p=${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;

/** Whether `password` matches a PHC string made by `hashPassword` (constant time; false for any other format). */
export async function verifyPassword(password: string, phc: string): Promise<boolean> {
  const match = PHC.exec(phc);
  if (!match) return false;
  const [, ln, r, p, salt, hash] = match as unknown as [string, string, string, string, string, string];
  const logN = Number(ln);
  if (logN < 10 || logN > 20) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await derive(password, Buffer.from(salt, 'base64'), { N: 2 ** logN, r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}
