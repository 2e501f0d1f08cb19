import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { passwordPool } from './hash-pool.ts';

/**
 * Passwords, hashed with scrypt (node:crypto) into a PHC string
 * `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt b64>$<hash b64>`, so the cost can rise later and old
 * hashes still verify. N = 2^15, r = 8, p = 1 (OWASP's scrypt minimum is N = 2^17 at r = 8 for
 * interactive logins; 2^15 keeps a create under ~60 ms on a loaded 2-core host while staying
 * memory-hard at 32 MiB). Every hash and check runs in the fair pool (hash-pool.ts).
 */
const LOG_N = 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

/**
 * The most an imported hash may cost to check, per scheme. Each accepts what real exporters
 * produce (Firebase: mem_cost 14, rounds 8; Auth0 and most frameworks: bcrypt 10 to 12; OWASP's
 * scrypt N = 2^17, r = 8, p = 1; argon2's RFC 9106 and library defaults: 64 MiB, t = 3, p = 4;
 * Django's PBKDF2: 1,000,000 or so) and refuses the rest: an importer must not choose how much
 * memory and CPU every later password check of that user takes.
 */
export const IMPORTED_HASH_BOUNDS = {
  /** scrypt: N*r*p at most 2^20, so at most 128 MiB and ~0.4 s per check (N = 2^17, r = 8, p = 1). */
  scrypt: { maxWork: 2 ** 20, maxLogN: 20, maxR: 32, maxP: 16 },
  /** Firebase's scrypt variant: its own ranges (rounds 1..8, mem_cost 1..14). */
  firebaseScrypt: { maxRounds: 8, maxMemCost: 14 },
  /** bcrypt's cost (log2 of the rounds): 4..14. */
  bcrypt: { minCost: 4, maxCost: 14 },
  /** argon2: memory in KiB (256 MiB), passes, lanes. */
  argon2: { maxMemoryKiB: 262_144, maxPasses: 10, maxLanes: 16 },
  /** PBKDF2's iterations. */
  pbkdf2: { maxIterations: 2_000_000 },
} as const;

/** `N*r*p` within the scrypt bound (the memory is 128*N*r bytes; the time grows with N*r*p). */
const scryptWithinBounds = (logN: number, r: number, p: number) => {
  const { maxWork, maxLogN, maxR, maxP } = IMPORTED_HASH_BOUNDS.scrypt;
  return logN >= 1 && logN <= maxLogN && r >= 1 && r <= maxR && p >= 1 && p <= maxP && 2 ** logN * r * p <= maxWork;
};

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  // maxmem must cover 128 * N * r bytes, plus slack.
  const maxmem = 256 * (options.N ?? 1) * (options.r ?? 8);
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...options, maxmem }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** A new PHC string for `password`, with a fresh random salt, hashed in `environmentId`'s share of the pool. */
export async function hashPassword(environmentId: string, password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await passwordPool.run(environmentId, () => derive(password, salt, { N: 2 ** LOG_N, r: R, p: P }));
  return `$scrypt$ln=${LOG_N},r=${R},p=${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

const B64 = '[A-Za-z0-9+/]+={0,2}';
const PHC = new RegExp(`^\\$scrypt\\$ln=(\\d{1,2}),r=(\\d{1,2}),p=(\\d{1,2})\\$(${B64})\\$(${B64})$`);

/**
 * Whether `password` matches a scrypt PHC string (ours, or an imported one within the bounds),
 * in constant time and in `environmentId`'s share of the pool; false for any other format, and
 * for a stored hash over the bounds (imported before they existed), which is never run.
 */
export async function verifyPassword(environmentId: string, password: string, phc: string): Promise<boolean> {
  const match = PHC.exec(phc);
  if (!match) return false;
  const [, ln, r, p, salt, hash] = match as unknown as [string, string, string, string, string, string];
  const [logN, blockSize, parallel] = [Number(ln), Number(r), Number(p)];
  if (logN < 10 || !scryptWithinBounds(logN, blockSize, parallel)) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await passwordPool.run(environmentId, () =>
    derive(password, Buffer.from(salt, 'base64'), { N: 2 ** logN, r: blockSize, p: parallel }),
  );
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A PHC string's parameters (`k=v` pairs, comma-separated, in any `$` segment), by name. */
function phcParameters(hash: string): Map<string, string> {
  const parameters = new Map<string, string>();
  for (const segment of hash.split('$').slice(2)) {
    for (const pair of segment.split(',')) {
      const at = pair.indexOf('=');
      if (at > 0) parameters.set(pair.slice(0, at), pair.slice(at + 1));
    }
  }
  return parameters;
}

/** A whole decimal number in `min..max`, or undefined. */
function intIn(value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined || !/^\d{1,10}$/.test(value)) return undefined;
  const n = Number(value);
  return n >= min && n <= max ? n : undefined;
}

/**
 * Why an imported `password_hash` of `type` is refused, or undefined when it may be stored: it
 * must be in the scheme's usual format, and its cost within IMPORTED_HASH_BOUNDS. `ssha` has no
 * cost to bound (a salted SHA-1).
 */
export function importedHashProblem(type: string, hash: string): string | undefined {
  const b = IMPORTED_HASH_BOUNDS;
  switch (type) {
    case 'scrypt': {
      const ps = phcParameters(hash);
      if (!hash.startsWith('$scrypt$') || !ps.has('ln') || !ps.has('r')) {
        return 'A scrypt hash is a PHC string: $scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>.';
      }
      const [logN, r, p] = [intIn(ps.get('ln'), 1, 99), intIn(ps.get('r'), 1, 999), intIn(ps.get('p') ?? '1', 1, 999)];
      if (logN === undefined || r === undefined || p === undefined || !scryptWithinBounds(logN, r, p)) {
        return `scrypt parameters over the limit: N*r*p may be at most 2^20 (e.g. ln=17,r=8,p=1), r at most ${b.scrypt.maxR}, p at most ${b.scrypt.maxP}.`;
      }
      return undefined;
    }
    case 'firebase-scrypt': {
      const ps = phcParameters(hash);
      if (!hash.startsWith('$firebase-scrypt$') || !ps.has('r') || !ps.has('m')) {
        return 'A firebase-scrypt hash is a PHC string with its rounds (r) and mem_cost (m): $firebase-scrypt$...';
      }
      const { maxRounds, maxMemCost } = b.firebaseScrypt;
      if (intIn(ps.get('r'), 1, maxRounds) === undefined || intIn(ps.get('m'), 1, maxMemCost) === undefined) {
        return `firebase-scrypt parameters out of Firebase's range: rounds (r) 1..${maxRounds}, mem_cost (m) 1..${maxMemCost}.`;
      }
      return undefined;
    }
    case 'bcrypt': {
      const match = /^\$2[abxy]?\$(\d{2})\$[./A-Za-z0-9]{53}$/.exec(hash);
      if (!match) return 'A bcrypt hash looks like $2b$<cost>$<53 characters>.';
      if (intIn(match[1], b.bcrypt.minCost, b.bcrypt.maxCost) === undefined) {
        return `bcrypt cost out of range: ${b.bcrypt.minCost}..${b.bcrypt.maxCost}.`;
      }
      return undefined;
    }
    case 'argon2': {
      const ps = phcParameters(hash);
      if (!/^\$argon2(id|i|d)\$/.test(hash) || !ps.has('m') || !ps.has('t')) {
        return 'An argon2 hash is a PHC string: $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>.';
      }
      const { maxMemoryKiB, maxPasses, maxLanes } = b.argon2;
      const [m, t, p] = [intIn(ps.get('m'), 1, maxMemoryKiB), intIn(ps.get('t'), 1, maxPasses), ps.get('p') ?? '1'];
      if (m === undefined || t === undefined || intIn(p, 1, maxLanes) === undefined) {
        return `argon2 parameters over the limit: m at most ${maxMemoryKiB} KiB, t at most ${maxPasses}, p at most ${maxLanes}.`;
      }
      return undefined;
    }
    case 'pbkdf2': {
      const ps = phcParameters(hash);
      if (!/^\$pbkdf2(-sha(1|256|512))?\$/.test(hash) || !ps.has('i')) {
        return 'A pbkdf2 hash is a PHC string: $pbkdf2-sha256$i=<iterations>,l=<length>$<salt>$<hash>.';
      }
      if (intIn(ps.get('i'), 1, b.pbkdf2.maxIterations) === undefined) {
        return `pbkdf2 iterations over the limit: at most ${b.pbkdf2.maxIterations}.`;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}
