import { createHash, randomBytes } from 'node:crypto';
import { ssoAccessTokens, ssoCodes } from '@atrium/db';
import { completeSignIn, contractError, sha256Hex } from '@atrium/routers';
import { eq, inArray } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { statementsOf } from '../helpers/statements.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { identity, registerRedirectUri, ssoSetup } from './sign-in.ts';

// Group commit of `POST /sso/token` (issue #37): exchanges sent while one is being spent go
// together as one statement, and each caller still gets its own answer.

// The worker's migrated database is built once, not in a test's time.
beforeAll(async () => {
  await newEnvironment();
}, 120_000);

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** The batch's statement (store.ts `spendCodesStatement`), by its text. */
const isBatch = (text: string) => /from unnest\([\s\S]*update "sso_codes"/.test(text);

/** The lone exchange's statement (store.ts `spendCodeStatement`): a failed batch is retried as these. */
const isSingle = (text: string) => /^with spent as \(\s*update "sso_codes"/.test(text);

/** `count` codes of the environment, each of its own sign-in (IdP-initiated, to the default redirect URI). */
async function codesOf(env: TestEnvironment, count: number): Promise<string[]> {
  const { domain, connection, scope } = await ssoSetup(env);
  await registerRedirectUri(env, 'https://app.example.com/callback', true);
  const codes: string[] = [];
  for (let i = 0; i < count; i++) {
    const { redirectUrl } = await completeSignIn(scope, connection, null, identity(`user${i}@${domain}`));
    codes.push(new URL(redirectUrl).searchParams.get('code') ?? '');
  }
  return codes;
}

/** Gives the code a PKCE challenge (as an authorization with `code_challenge` would have). */
async function withChallenge(env: TestEnvironment, code: string, verifier: string) {
  await env.deps.db
    .update(ssoCodes)
    .set({ codeChallenge: s256(verifier) })
    .where(eq(ssoCodes.codeHash, sha256Hex(code)));
}

/** `POST /sso/token` through the procedure, as a confidential client of `env`. */
const exchange = (env: TestEnvironment, code: string, verifier?: string) =>
  env.caller.sso.token({
    client_id: env.clientId,
    client_secret: env.apiKey,
    grant_type: 'authorization_code',
    code,
    ...(verifier === undefined ? {} : { code_verifier: verifier }),
  });

/** Each outcome as the caller would see it on the wire: 200 with the profile's e-mail, or status, code, message. */
const outcomes = (settled: PromiseSettledResult<{ profile: { email: string } }>[]) =>
  settled.map((s) => {
    if (s.status === 'fulfilled') return { status: 200, email: s.value.profile.email };
    const { status, body } = contractError(s.reason);
    return { status, code: body.code, message: body.message };
  });

const tokensOf = (env: TestEnvironment) =>
  env.deps.db.select().from(ssoAccessTokens).where(eq(ssoAccessTokens.environmentId, env.environmentId));
const codeRows = (env: TestEnvironment, codes: string[]) =>
  env.deps.db
    .select()
    .from(ssoCodes)
    .where(inArray(ssoCodes.codeHash, codes.map(sha256Hex)));

describe('group commit of code exchanges', () => {
  it('exchanges 40 concurrent codes, each once, in fewer statements than exchanges', async () => {
    const env = await newEnvironment();
    const codes = await codesOf(env, 40);
    const { result, statements } = await statementsOf(env.deps.db, () =>
      Promise.all(codes.map((code) => exchange(env, code))),
    );
    // Each caller gets its own code's profile and a token of its own.
    expect(result.map((r) => r.profile.email)).toEqual(codes.map((_, i) => expect.stringMatching(`^user${i}@`)));
    const stored = await tokensOf(env);
    expect(stored.map((row) => row.tokenHash).sort()).toEqual(result.map((r) => sha256Hex(r.access_token)).sort());
    expect(new Set(stored.map((row) => row.tokenHash)).size).toBe(40);
    const profileOfToken = new Map(stored.map((row) => [row.tokenHash, row.profileId]));
    expect(result.every((r) => profileOfToken.get(sha256Hex(r.access_token)) === r.profile.id)).toBe(true);
    expect((await codeRows(env, codes)).every((row) => row.usedAt !== null)).toBe(true);
    expect(statements.length).toBeLessThan(40);
    expect(statements.some(isBatch)).toBe(true);
    expect(statements.filter(isSingle).length).toBeLessThan(40);
  });

  it('a lone exchange is one statement, not the batch', async () => {
    const env = await newEnvironment();
    const [code = ''] = await codesOf(env, 1);
    const { result, statements } = await statementsOf(env.deps.db, () => exchange(env, code));
    expect(result.profile.email).toMatch(/^user0@/);
    expect(statements).toHaveLength(1);
    expect(statements.filter(isSingle)).toHaveLength(1);
    expect(await tokensOf(env)).toHaveLength(1);
  });

  it('gives each exchange of a mixed batch its own answer and stores only the valid spends', async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const [first, valid, spent, wrongVerifier, twice, pkce, pkceTwice] = (await codesOf(env, 7)) as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const [foreign = ''] = await codesOf(other, 1);
    const verifier = randomBytes(32).toString('base64url');
    const another = randomBytes(32).toString('base64url');
    await withChallenge(env, wrongVerifier, verifier);
    await withChallenge(env, pkce, verifier);
    await withChallenge(env, pkceTwice, verifier);
    await exchange(env, spent);
    const before = (await tokensOf(env)).length;

    // The first call goes alone; the others arrive while it is in flight and go as one batch.
    const { result: settled, statements } = await statementsOf(env.deps.db, () =>
      Promise.allSettled([
        exchange(env, first),
        exchange(env, valid),
        exchange(env, spent),
        exchange(env, wrongVerifier, another),
        exchange(env, foreign),
        exchange(env, twice),
        exchange(env, twice),
        exchange(env, pkce, verifier),
        // One code twice, the first with the wrong verifier: the second, which meets the challenge, spends it.
        exchange(env, pkceTwice, another),
        exchange(env, pkceTwice, verifier),
      ]),
    );
    const spentOrExpired = {
      status: 400,
      code: 'invalid_grant',
      message: 'The code has expired or has already been used.',
    };
    const mismatch = {
      status: 400,
      code: 'invalid_grant',
      message: 'The code_verifier does not match the code_challenge of the authorization.',
    };
    expect(outcomes(settled)).toEqual([
      { status: 200, email: expect.stringMatching(/^user0@/) },
      { status: 200, email: expect.stringMatching(/^user1@/) },
      spentOrExpired,
      mismatch,
      spentOrExpired,
      { status: 200, email: expect.stringMatching(/^user4@/) },
      spentOrExpired,
      { status: 200, email: expect.stringMatching(/^user5@/) },
      // Its reason is read after the batch: by then its twin has spent the code.
      spentOrExpired,
      { status: 200, email: expect.stringMatching(/^user6@/) },
    ]);
    // The first alone, the nine others in one batch that did not fail (else each is sent alone).
    expect(statements.filter(isBatch)).toHaveLength(1);
    expect(statements.filter(isSingle)).toHaveLength(1);

    // Only the five spends stored a token, each the one its caller got.
    const issued = settled.flatMap((s) => (s.status === 'fulfilled' ? [sha256Hex(s.value.access_token)] : []));
    const stored = (await tokensOf(env)).map((row) => row.tokenHash);
    expect(stored).toHaveLength(before + 5);
    expect(issued.every((hash) => stored.includes(hash))).toBe(true);
    expect(await tokensOf(other)).toHaveLength(0);
    // The refused codes stay unspent: the wrong verifier's and the other environment's.
    const used = new Map((await codeRows(env, [wrongVerifier, foreign])).map((row) => [row.codeHash, row.usedAt]));
    expect(used.get(sha256Hex(wrongVerifier))).toBeNull();
    const [foreignRow] = await codeRows(other, [foreign]);
    expect(foreignRow?.usedAt).toBeNull();
  });
});
