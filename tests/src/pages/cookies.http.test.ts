import { describe, expect, it } from 'vitest';
import { sdkFor } from '../helpers/sdk.ts';
import { adminTokenOf } from '../helpers/tokens.ts';
import { getWorld, newEnvironment, TEST_ISSUER } from '../helpers/world.ts';

// The two cookie sessions (console and admin portal) read their cookie and CSRF header through one
// module (rest-facade/src/pipeline/cookies.ts, on the `cookie` package): a malformed `Cookie`
// header is no session (the contract's 401 or 403, never a 500), and a good cookie is found among
// others, malformed ones included.

const MALFORMED = [
  ['no pair at all', ';;;'],
  ['a lone equals sign', '='],
  ['a name without a value', 'atrium_console; atrium_portal'],
  ['an empty value', 'atrium_console=; atrium_portal='],
  ['a broken percent escape', 'atrium_console=%E0%A4%A; atrium_portal=%'],
  ['an unterminated quote', 'atrium_console="abc; atrium_portal="'],
  ['a prototype key', '__proto__=x; constructor=y; atrium_console=__proto__'],
  ['a long value', `atrium_console=${'A'.repeat(4096)}; atrium_portal=${'B'.repeat(4096)}`],
] as const;

async function get(path: string, headers: Record<string, string>) {
  const { url } = await getWorld();
  const res = await fetch(`${url}${path}`, { headers, redirect: 'manual' });
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, body: type.includes('json') ? ((await res.json()) as any) : await res.text() };
}

describe.each(MALFORMED)('a Cookie header with %s', (_name, cookie) => {
  it('is no console session: 401 on /console/session and on /trpc', async () => {
    const session = await get('/console/session', { Cookie: cookie });
    expect(session.status).toBe(401);
    expect(session.body.code).toBe('unauthorized');
    const input = encodeURIComponent(JSON.stringify(undefined));
    const call = await get(`/trpc/admin.environments.list?input=${input}`, { Cookie: cookie, 'x-csrf-token': 'x' });
    expect(call.status).toBe(401);
    expect(call.body.error.data.contract.body.code).toBe('unauthorized');
  });

  it('is no portal session: 403 on the session API, the readable 401 page on a portal page', async () => {
    const status = await get('/portal/session/status', { Cookie: cookie });
    expect(status.status).toBe(403);
    expect(status.body.code).toBe('forbidden');
    const page = await get('/portal/domain_verification', { Cookie: cookie });
    expect(page.status).toBe(401);
    expect(page.body).toContain('Your admin portal session has ended');
  });
});

describe('a session cookie among other cookies', () => {
  it('is read past malformed pairs and other names (console)', async () => {
    const { url } = await getWorld();
    const res = await fetch(`${url}/console/session`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: await adminTokenOf() }),
    });
    const session = res.headers.getSetCookie()[0]?.split(';')[0] ?? '';
    const { csrf_token } = (await res.json()) as { csrf_token: string };
    const again = await get('/console/session', { Cookie: `theme=dark; =; junk; other="a b"; ${session}; z=%` });
    expect(again.status).toBe(200);
    expect(again.body.csrf_token).toBe(csrf_token);
  });

  it('is read past malformed pairs and other names (portal)', async () => {
    const env = await newEnvironment();
    const organization = (await env.http.post('/organizations', { name: 'Cookie Corp' })).body.id as string;
    const { link } = await sdkFor(env).adminPortal.generateLink({ organization, intent: 'domain_verification' });
    const url = new URL(link);
    expect(url.origin).toBe(new URL(TEST_ISSUER).origin);
    const opened = await fetch(`${env.world.url}${url.pathname}${url.search}`, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    const session = opened.headers.getSetCookie()[0]?.split(';')[0] ?? '';
    const status = await get('/portal/session/status', { Cookie: `a=1; ;b; ${session}; atrium_console=x` });
    expect(status.status).toBe(200);
    expect(status.body.domains).toEqual([]);
  });
});
