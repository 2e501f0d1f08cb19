import { consoleSessions, environments } from '@atrium/db';
import { authenticateConsole, createAdminToken, sha256Hex } from '@atrium/routers';
import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminCaller, adminTokenOf } from '../helpers/tokens.ts';
import { getWorld } from '../helpers/world.ts';
import { startOwnApp } from '../reliability/own-app.ts';
import { consoleBuilt, consoleCall, signIn } from './helpers.ts';

const sessionCount = async () => {
  const { deps } = await getWorld();
  const [row] = await deps.db.select({ n: sql<number>`count(*)::int` }).from(consoleSessions);
  return Number(row?.n);
};

const environmentsNamed = async (name: string) => {
  const { deps } = await getWorld();
  return deps.db.select().from(environments).where(eq(environments.name, name));
};

beforeAll(async () => {
  await consoleBuilt();
});

describe('console sign-in', () => {
  it('exchanges the admin token for an HttpOnly, SameSite=Strict cookie of 12 hours, storing only its hash', async () => {
    const session = await signIn(await adminTokenOf());
    expect(session.setCookies).toHaveLength(2);
    const paths = session.setCookies.map((c) => /Path=([^;]+)/.exec(c)?.[1]).sort();
    expect(paths).toEqual(['/console', '/trpc']);
    for (const cookie of session.setCookies) {
      expect(cookie).toMatch(/^atrium_console=atrium_console_[0-9A-Za-z]{43};/);
      expect(cookie).toContain('HttpOnly');
      expect(cookie).toContain('SameSite=Strict');
      expect(cookie).toContain('Max-Age=43200');
    }
    const hours = (Date.parse(session.body.expires_at) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(11.9);
    expect(hours).toBeLessThanOrEqual(12);
    expect(session.body.csrf_token).toMatch(/^[\w-]{43}$/);

    const secret = session.cookie.split('=')[1] as string;
    const { deps } = await getWorld();
    const [stored] = await deps.db
      .select()
      .from(consoleSessions)
      .where(eq(consoleSessions.tokenHash, sha256Hex(secret)));
    expect(stored).toBeDefined();
    expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it.each([
    ['a wrong admin token', { token: `atrium_admin_${'x'.repeat(40)}` }, 401, 'unauthorized'],
    ['a malformed token', { token: 'sk_test_nope' }, 401, 'unauthorized'],
    ['no token', {}, 422, 'invalid_request_parameters'],
    ['a token that is not a string', { token: 42 }, 422, 'invalid_request_parameters'],
  ])('refuses %s and stores no session', async (_name, body, status, code) => {
    const { url } = await getWorld();
    const before = await sessionCount();
    const res = await fetch(`${url}/console/session`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(status);
    expect((await res.json()).code).toBe(code);
    expect(res.headers.getSetCookie()).toEqual([]);
    expect(await sessionCount()).toBe(before);
  });

  it('answers the CSRF token to the session cookie after a reload, and 401 without a session', async () => {
    const { url } = await getWorld();
    const session = await signIn(await adminTokenOf());
    const again = await fetch(`${url}/console/session`, { headers: { Cookie: session.cookie } });
    expect(again.status).toBe(200);
    expect((await again.json()).csrf_token).toBe(session.csrf);
    const none = await fetch(`${url}/console/session`);
    expect(none.status).toBe(401);
    expect((await none.json()).code).toBe('unauthorized');
  });
});

describe('console calls on /trpc', () => {
  it('accept the session cookie with its CSRF token as an admin credential', async () => {
    const session = await signIn(await adminTokenOf());
    const headers = { Cookie: session.cookie, 'x-csrf-token': session.csrf };
    const listed = await consoleCall('admin.environments.list', undefined, headers);
    expect(listed.status).toBe(200);
    expect(Array.isArray(listed.body.result.data)).toBe(true);
    const name = `console-${Date.now()}`;
    const made = await consoleCall('admin.environments.create', { name }, headers, 'mutation');
    expect(made.status).toBe(200);
    expect(await environmentsNamed(name)).toHaveLength(1);
  });

  it('answer a second environment of the same name with 409 environment_name_taken, storing nothing', async () => {
    const session = await signIn(await adminTokenOf());
    const headers = { Cookie: session.cookie, 'x-csrf-token': session.csrf };
    const name = `console-dup-${Date.now()}`;
    expect((await consoleCall('admin.environments.create', { name }, headers, 'mutation')).status).toBe(200);
    const again = await consoleCall('admin.environments.create', { name }, headers, 'mutation');
    expect(again.status).toBe(409);
    expect(again.body.error.data.contract.body).toEqual({
      code: 'environment_name_taken',
      message: 'An environment with this name already exists; choose another name.',
    });
    expect(await environmentsNamed(name)).toHaveLength(1);
  });

  it.each([
    ['no CSRF token', () => ({}) as Record<string, string>, 403],
    ['a wrong CSRF token', (csrf: string) => ({ 'x-csrf-token': `${csrf.slice(0, -2)}xx` }), 403],
    ['an empty CSRF token', () => ({ 'x-csrf-token': '' }), 403],
  ])('refuse a write with %s and store nothing', async (_name, csrfHeaders, status) => {
    const session = await signIn(await adminTokenOf());
    const name = `csrf-${Date.now()}-${Math.random()}`;
    const res = await consoleCall(
      'admin.environments.create',
      { name },
      { Cookie: session.cookie, ...csrfHeaders(session.csrf) },
      'mutation',
    );
    expect(res.status).toBe(status);
    expect(res.body.error.data.contract.body.code).toBe('csrf_token_invalid');
    expect(await environmentsNamed(name)).toEqual([]);
    // Reads need it too.
    const read = await consoleCall('admin.environments.list', undefined, { Cookie: session.cookie });
    expect(read.status).toBe(403);
  });

  it("refuse another session's CSRF token", async () => {
    const token = await adminTokenOf();
    const [one, two] = [await signIn(token), await signIn(token)];
    const res = await consoleCall('admin.environments.list', undefined, {
      Cookie: one.cookie,
      'x-csrf-token': two.csrf,
    });
    expect(res.status).toBe(403);
  });

  it.each([
    ['a forged cookie', `atrium_console=atrium_console_${'A'.repeat(43)}`],
    ['a malformed cookie', 'atrium_console=nope'],
  ])('refuse %s with 401 and store nothing', async (_name, cookie) => {
    const name = `forged-${Date.now()}-${Math.random()}`;
    const res = await consoleCall(
      'admin.environments.create',
      { name },
      { Cookie: cookie, 'x-csrf-token': 'x'.repeat(43) },
      'mutation',
    );
    expect(res.status).toBe(401);
    expect(res.body.error.data.contract.body.code).toBe('unauthorized');
    expect(await environmentsNamed(name)).toEqual([]);
  });

  it('refuse an expired session with 401', async () => {
    const session = await signIn(await adminTokenOf());
    const { deps } = await getWorld();
    const secret = session.cookie.split('=')[1] as string;
    await deps.db
      .update(consoleSessions)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(consoleSessions.tokenHash, sha256Hex(secret)));
    const res = await consoleCall('admin.environments.list', undefined, {
      Cookie: session.cookie,
      'x-csrf-token': session.csrf,
    });
    expect(res.status).toBe(401);
  });

  it('grant nothing outside the admin surface: an API procedure and a REST path still want an API key', async () => {
    const { url } = await getWorld();
    const session = await signIn(await adminTokenOf());
    const headers = { Cookie: session.cookie, 'x-csrf-token': session.csrf };
    expect((await consoleCall('organizations.list', {}, headers)).status).toBe(401);
    expect((await fetch(`${url}/organizations`, { headers })).status).toBe(401);
  });

  it('end with the admin token that opened them', async () => {
    const { deps } = await getWorld();
    const other = await createAdminToken(deps);
    const session = await signIn(other.token);
    const headers = { Cookie: session.cookie, 'x-csrf-token': session.csrf };
    expect((await consoleCall('admin.environments.list', undefined, headers)).status).toBe(200);
    await (await adminCaller()).adminTokens.revoke({ id: other.id });
    expect((await consoleCall('admin.environments.list', undefined, headers)).status).toBe(401);
  });
});

describe('the console session, looked up once per call', () => {
  it('is taken from the authenticate step as it was read, and its CSRF token is still checked', async () => {
    const { deps } = await getWorld();
    // A session no row holds: were it read again, it would be refused with 401.
    const looked = {
      id: 'console_session_01NOTSTORED',
      adminTokenId: 'admin_token_01X',
      expiresAt: new Date(Date.now() + 60_000),
    };
    const secret = `atrium_console_${'B'.repeat(43)}`;
    const session = await signIn(await adminTokenOf());
    await expect(authenticateConsole(deps, { session: secret, csrf: session.csrf }, looked)).rejects.toMatchObject({
      status: 403,
    });
    await expect(authenticateConsole(deps, { session: secret, csrf: undefined }, looked)).rejects.toMatchObject({
      status: 403,
    });
    // Without a looked-up session the procedure reads it itself: no row, 401.
    await expect(authenticateConsole(deps, { session: secret, csrf: 'x'.repeat(43) })).rejects.toMatchObject({
      status: 401,
    });
  });

  it.each([
    ['with the rate limits (the authenticate step reads the session)', true],
    ['without the rate limits (adminProcedure reads it)', false],
  ])('refuses a signed-out or expired session at once, and a call without CSRF, %s', async (_name, limited) => {
    const { deps, url: worldUrl } = await getWorld();
    const own = limited ? undefined : await startOwnApp(deps, { rateLimit: false });
    const url = own?.url ?? worldUrl;
    try {
      const call = (headers: Record<string, string>) =>
        fetch(`${url}/trpc/admin.environments.list?input=${encodeURIComponent(JSON.stringify(undefined))}`, {
          headers,
        });
      const one = await signIn(await adminTokenOf());
      const headers = { Cookie: one.cookie, 'x-csrf-token': one.csrf };
      expect((await call(headers)).status).toBe(200);
      expect((await call({ Cookie: one.cookie })).status).toBe(403);
      const signedOut = await fetch(`${worldUrl}/console/session`, { method: 'DELETE', headers });
      expect(signedOut.status).toBe(204);
      expect((await call(headers)).status).toBe(401);

      const two = await signIn(await adminTokenOf());
      const twoHeaders = { Cookie: two.cookie, 'x-csrf-token': two.csrf };
      expect((await call(twoHeaders)).status).toBe(200);
      await deps.db
        .update(consoleSessions)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(consoleSessions.tokenHash, sha256Hex(two.cookie.split('=')[1] as string)));
      const expired = await call(twoHeaders);
      expect(expired.status).toBe(401);
      expect(JSON.stringify(await expired.json())).toContain('unauthorized');
    } finally {
      await own?.close();
    }
  });
});

describe('console sign-out', () => {
  it('needs the CSRF token, then deletes the session and clears the cookies', async () => {
    const { url } = await getWorld();
    const session = await signIn(await adminTokenOf());
    const secret = session.cookie.split('=')[1] as string;
    const forged = await fetch(`${url}/console/session`, { method: 'DELETE', headers: { Cookie: session.cookie } });
    expect(forged.status).toBe(403);

    const res = await fetch(`${url}/console/session`, {
      method: 'DELETE',
      headers: { Cookie: session.cookie, 'x-csrf-token': session.csrf },
    });
    expect(res.status).toBe(204);
    const cleared = res.headers.getSetCookie();
    expect(cleared).toHaveLength(2);
    for (const cookie of cleared) expect(cookie).toMatch(/^atrium_console=; .*Max-Age=0/);
    const { deps } = await getWorld();
    expect(
      await deps.db
        .select()
        .from(consoleSessions)
        .where(eq(consoleSessions.tokenHash, sha256Hex(secret))),
    ).toEqual([]);
    const after = await consoleCall('admin.environments.list', undefined, {
      Cookie: session.cookie,
      'x-csrf-token': session.csrf,
    });
    expect(after.status).toBe(401);
  });
});

describe('console page', () => {
  it('is served with a strict CSP: scripts from this origin only, no inline script, no framing', async () => {
    const { url } = await getWorld();
    const res = await fetch(`${url}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    const html = await res.text();
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/);
    expect(html).not.toMatch(/https?:\/\//);
    const script = await fetch(`${url}/console/assets/console.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${url}/console/assets/..%2Fpackage.json`)).status).toBe(404);
  });
});

describe('console sign-in bodies', () => {
  it.each([
    ['malformed JSON', '{"token":', 'application/json'],
    ['a body that is not JSON', 'token=x', 'application/x-www-form-urlencoded'],
  ])('refuses %s with the contract error and stores nothing', async (_name, raw, type) => {
    const { url } = await getWorld();
    const before = await sessionCount();
    const res = await fetch(`${url}/console/session`, { method: 'POST', headers: { 'Content-Type': type }, body: raw });
    expect([400, 415, 422]).toContain(res.status);
    const body = await res.json();
    expect(typeof body.code).toBe('string');
    expect(body.code).not.toBe('server_error');
    expect(await sessionCount()).toBe(before);
  });
});

describe('console sign-in from another site', () => {
  it('is refused with 403 cross_origin before the token is read, and opens no session; the same origin passes', async () => {
    const { url } = await getWorld();
    const token = await adminTokenOf();
    const before = await sessionCount();
    const post = (origin: string) =>
      fetch(`${url}/console/session`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: origin },
        body: JSON.stringify({ token }),
      });
    for (const origin of ['https://evil.example', 'null', `${url}.evil.example`]) {
      const res = await post(origin);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'cross_origin' });
      expect(res.headers.getSetCookie()).toEqual([]);
    }
    expect(await sessionCount()).toBe(before);
    const same = await post(new URL(url).origin);
    expect(same.status).toBe(201);
    expect(await sessionCount()).toBe(before + 1);

    // Nor is a session closed from elsewhere.
    const session = await signIn(token);
    const out = await fetch(`${url}/console/session`, {
      method: 'DELETE',
      headers: { Cookie: session.cookie, 'X-CSRF-Token': session.csrf, Origin: 'https://evil.example' },
    });
    expect(out.status).toBe(403);
    expect(await sessionCount()).toBe(before + 2);
  });
});
