import { randomBytes, scryptSync } from 'node:crypto';
import { users } from '@atrium/db';
import { FairPool, verifyPassword } from '@atrium/routers';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { clientFor } from '../helpers/client.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

/**
 * An imported password hash may not choose its own cost (routers/src/lib/password.ts): every
 * later check of the user's password runs at it. Over the bounds, create and update answer 422
 * `invalid_password_hash` on `password_hash` and store nothing; what real exporters produce
 * passes. Hashing and checking run in a fair pool per environment (lib/hash-pool.ts).
 */

const b64 = (n: number) => randomBytes(n).toString('base64');
const SALT = b64(16);
const HASH = b64(32);

/** A scrypt PHC string with these parameters (the salt and hash are noise unless computed). */
const scrypt = (ln: number, r: number, p: number) => `$scrypt$ln=${ln},r=${r},p=${p}$${SALT}$${HASH}`;

/** A scrypt PHC string that `password` really matches. */
function realScrypt(password: string, ln: number, r: number, p: number) {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, 32, { N: 2 ** ln, r, p, maxmem: 256 * 2 ** ln * r });
  return `$scrypt$ln=${ln},r=${r},p=${p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

const BCRYPT_TAIL = 'N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';

/** What exporters produce: Auth0 (bcrypt 10), Firebase (rounds 8, mem_cost 14), OWASP's scrypt, argon2 defaults, Django's PBKDF2. */
const ACCEPTED: Array<[string, string, string]> = [
  ['bcrypt of cost 10 (Auth0)', 'bcrypt', `$2b$10$${BCRYPT_TAIL}`],
  ['bcrypt of cost 14, $2y$', 'bcrypt', `$2y$14$${BCRYPT_TAIL}`],
  ['scrypt at the highest allowed cost (N=2^17, r=8, p=1)', 'scrypt', scrypt(17, 8, 1)],
  ['scrypt N=2^14, r=8, p=1 (node and libsodium defaults)', 'scrypt', scrypt(14, 8, 1)],
  [
    "Firebase's scrypt (rounds 8, mem_cost 14)",
    'firebase-scrypt',
    `$firebase-scrypt$hash=${HASH}$salt=${SALT}$sk=${b64(64)}$ss=Bw==$r=8$m=14`,
  ],
  ['argon2id, 64 MiB, t=3, p=4', 'argon2', `$argon2id$v=19$m=65536,t=3,p=4$${SALT}$${HASH}`],
  ['pbkdf2-sha256, 1,000,000 iterations', 'pbkdf2', `$pbkdf2-sha256$i=1000000,l=32$${SALT}$${HASH}`],
  ['ssha', 'ssha', `{SSHA}${b64(28)}`],
];

const REFUSED: Array<[string, string, string]> = [
  ['scrypt at ln=18, r=32 (1 GiB a check)', 'scrypt', scrypt(18, 32, 1)],
  ['scrypt at N=2^18, r=8 (twice the bound)', 'scrypt', scrypt(18, 8, 1)],
  ['scrypt at p=17', 'scrypt', scrypt(10, 8, 17)],
  ['scrypt with r=64', 'scrypt', scrypt(10, 64, 1)],
  ['scrypt without its parameters', 'scrypt', `$scrypt$$${SALT}$${HASH}`],
  ['a bcrypt hash as scrypt', 'scrypt', `$2b$10$${BCRYPT_TAIL}`],
  ['bcrypt of cost 15', 'bcrypt', `$2b$15$${BCRYPT_TAIL}`],
  ['bcrypt of cost 31', 'bcrypt', `$2b$31$${BCRYPT_TAIL}`],
  ['bcrypt of cost 3', 'bcrypt', `$2b$03$${BCRYPT_TAIL}`],
  ['a bcrypt hash cut short', 'bcrypt', '$2b$10$N9qo8uLOickgx2ZMRZoMye'],
  ['firebase-scrypt with 9 rounds', 'firebase-scrypt', `$firebase-scrypt$hash=${HASH}$salt=${SALT}$r=9$m=14`],
  ['firebase-scrypt with mem_cost 20', 'firebase-scrypt', `$firebase-scrypt$hash=${HASH}$salt=${SALT}$r=8$m=20`],
  ['argon2id of 1 GiB', 'argon2', `$argon2id$v=19$m=1048576,t=3,p=4$${SALT}$${HASH}`],
  ['argon2id of 100 passes', 'argon2', `$argon2id$v=19$m=65536,t=100,p=4$${SALT}$${HASH}`],
  ['pbkdf2 of 10,000,000 iterations', 'pbkdf2', `$pbkdf2-sha256$i=10000000,l=32$${SALT}$${HASH}`],
];

async function storedUsers(env: TestEnvironment) {
  return env.deps.db.select().from(users).where(eq(users.environmentId, env.environmentId));
}

describe('imported password hashes', () => {
  it.each(ACCEPTED)('accepts %s', async (_label, type, hash) => {
    const env = await newEnvironment();
    const res = await env.http.post('/user_management/users', {
      email: uniqueEmail('imported'),
      password_hash: hash,
      password_hash_type: type,
    });
    expect(res.status, res.text).toBe(201);
    expect(await storedUsers(env)).toEqual([expect.objectContaining({ passwordHash: hash, passwordHashType: type })]);
  });

  it.each(REFUSED)('refuses %s: 422 on create and update, nothing stored', async (_label, type, hash) => {
    const env = await newEnvironment();
    const body = { password_hash: hash, password_hash_type: type };
    const created = await env.http.post('/user_management/users', { email: uniqueEmail('costly'), ...body });
    expect(created.status, created.text).toBe(422);
    expect(created.body).toMatchObject({
      code: 'invalid_request_parameters',
      errors: [{ field: 'password_hash', code: 'invalid_password_hash', message: expect.any(String) }],
    });
    expect(await storedUsers(env)).toEqual([]);

    const user = (await env.http.post('/user_management/users', { email: uniqueEmail('plain') })).body;
    const updated = await env.http.put(`/user_management/users/${user.id}`, body);
    expect(updated.status, updated.text).toBe(422);
    expect(updated.body.errors[0]).toMatchObject({ field: 'password_hash', code: 'invalid_password_hash' });
    const [row] = await storedUsers(env);
    expect(row).toMatchObject({ passwordHash: null, passwordHashType: null });
    expect(row?.updatedAt.toISOString()).toBe(user.updated_at);
  });

  it('checks an imported scrypt hash within the bounds; never runs a stored one over them', async () => {
    const env = await newEnvironment();
    const password = 'correct horse battery';
    expect(await verifyPassword(env.environmentId, password, realScrypt(password, 12, 8, 1))).toBe(true);
    expect(await verifyPassword(env.environmentId, 'wrong horse battery', realScrypt(password, 12, 8, 1))).toBe(false);
    // Right, but over the bounds (p = 17): stored before the bounds existed, it is never run.
    const legacy = realScrypt(password, 12, 8, 17);
    expect(await verifyPassword(env.environmentId, password, legacy)).toBe(false);

    // Through the UserSecurity widget: "Invalid credentials", and the hash stays.
    const org = await env.http.post('/organizations', { name: 'Legacy Corp' });
    const user = await env.http.post('/user_management/users', { email: uniqueEmail('legacy') });
    await env.http.post('/user_management/organization_memberships', {
      user_id: user.body.id,
      organization_id: org.body.id,
    });
    await env.deps.db
      .update(users)
      .set({ passwordHash: legacy, passwordHashType: 'scrypt' })
      .where(and(eq(users.environmentId, env.environmentId), eq(users.id, user.body.id)));
    const issued = await env.http.post('/widgets/token', {
      organization_id: org.body.id,
      user_id: user.body.id,
      scopes: [],
    });
    const { http } = clientFor(env, issued.body.token);
    const res = await http.post('/_widgets/UserProfile/update-password', {
      currentPassword: password,
      newPassword: 'a brand new one',
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_credentials');
    expect((await storedUsers(env))[0]?.passwordHash).toBe(legacy);
  });
});

/** A job that runs until the test lets it finish. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

describe('the password pool', () => {
  it("keeps a slot for other environments: one environment's burst never holds them all", async () => {
    const pool = new FairPool(2, 1, 100);
    const started: string[] = [];
    const gates = Array.from({ length: 5 }, () => gate());
    const burst = gates.map((g, i) =>
      pool.run('env_A', async () => {
        started.push(`A${i}`);
        await g.opened;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual(['A0']);
    expect(pool.load).toEqual({ running: 1, waiting: 4 });
    // B runs at once, beside A's first, whatever A has queued.
    const other = gate();
    const b = pool.run('env_B', async () => {
      started.push('B0');
      await other.opened;
    });
    await Promise.resolve();
    expect(started).toEqual(['A0', 'B0']);
    other.open();
    await b;
    for (const g of gates) g.open();
    await Promise.all(burst);
    expect(started).toEqual(['A0', 'B0', 'A1', 'A2', 'A3', 'A4']);
    expect(pool.load).toEqual({ running: 0, waiting: 0 });
  });

  it('takes environments in turn when slots free up, and refuses past the waiting bound (429)', async () => {
    const pool = new FairPool(1, 1, 2);
    const order: string[] = [];
    const first = gate();
    const running = pool.run('env_A', async () => {
      order.push('A0');
      await first.opened;
    });
    const queued = [
      pool.run('env_A', async () => order.push('A1')),
      pool.run('env_A', async () => order.push('A2')),
      pool.run('env_B', async () => order.push('B0')),
      pool.run('env_C', async () => order.push('C0')),
    ];
    await expect(pool.run('env_A', async () => order.push('A3'))).rejects.toMatchObject({
      status: 429,
      apiCode: 'rate_limit_exceeded',
      retryAfterSeconds: 1,
    });
    first.open();
    await Promise.all([running, ...queued]);
    expect(order).toEqual(['A0', 'A1', 'B0', 'C0', 'A2']);
  });

  it('refuses a job that waited too long for a slot (429), and never runs it', async () => {
    vi.useFakeTimers();
    try {
      const pool = new FairPool(2, 1, 10, 5_000);
      const held = gate();
      const running = pool.run('env_A', () => held.opened);
      let ran = false;
      const waiting = pool.run('env_A', async () => {
        ran = true;
      });
      const refused = expect(waiting).rejects.toMatchObject({ status: 429, retryAfterSeconds: 1 });
      await vi.advanceTimersByTimeAsync(5_000);
      await refused;
      expect(pool.load).toEqual({ running: 1, waiting: 0 });
      held.open();
      await running;
      expect(ran).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});
