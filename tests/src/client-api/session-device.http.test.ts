import { sessions } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { clientSetup } from '../helpers/client.ts';
import { sdkFor } from '../helpers/sdk.ts';
import type { TestEnvironment } from '../helpers/world.ts';
import { newEnvironment } from '../helpers/world.ts';
import { anotherToken } from './self-helpers.ts';

/**
 * A session records the device of the first client-surface request with one of its tokens
 * (address and User-Agent), and its last activity to the minute (routers/src/sessions/service.ts
 * `noteSessionUse`); the UserSessions widget shows them.
 */

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:132.0) Gecko/20100101 Firefox/132.0';

async function stored(env: TestEnvironment, sessionId: string) {
  const [row] = await env.deps.db.select().from(sessions).where(eq(sessions.id, sessionId));
  if (!row) throw new Error(`no session ${sessionId}`);
  return row;
}

const sidOf = (token: string) => JSON.parse(atob(token.split('.')[1] as string)).sid as string;

describe('a session records where it is used', () => {
  it('stores the first request’s address and User-Agent and shows them on every surface', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { kind: 'client' });
    const sid = String(a.claims.sid);
    const before = await stored(env, sid);
    expect(before).toMatchObject({ ipAddress: null, userAgent: null, lastActivityAt: null });

    const startedAt = Date.now();
    expect((await a.http.get('/_widgets/UserProfile/me', { 'User-Agent': CHROME })).status).toBe(200);
    const after = await stored(env, sid);
    expect(after.ipAddress).toBe('127.0.0.1');
    expect(after.userAgent).toBe(CHROME);
    expect(after.lastActivityAt?.getTime()).toBeGreaterThanOrEqual(startedAt - 1_000);

    // The widget's list, GraphQL and the API-key list all show the device.
    const listed = await a.http.get('/_widgets/UserProfile/sessions', { 'User-Agent': CHROME });
    expect(listed.body.data).toEqual([
      expect.objectContaining({
        id: sid,
        ipAddress: '127.0.0.1',
        userAgent: CHROME,
        lastActivityAt: after.lastActivityAt?.toISOString(),
        updatedAt: after.lastActivityAt?.toISOString(),
      }),
    ]);
    const graphql = await a.graphql('{ sessions { id isCurrent ipAddress userAgent lastActivityAt } }');
    expect(graphql.body.data.sessions).toEqual([
      {
        id: sid,
        isCurrent: true,
        ipAddress: '127.0.0.1',
        userAgent: CHROME,
        lastActivityAt: after.lastActivityAt?.toISOString(),
      },
    ]);
    const api = await sdkFor(env).userManagement.listSessions(a.userId);
    expect(api.data).toEqual([expect.objectContaining({ id: sid, ipAddress: '127.0.0.1', userAgent: CHROME })]);
  });

  it('keeps the first device, and moves the last activity only when it is a minute old', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { kind: 'client' });
    const sid = String(a.claims.sid);
    await a.http.get('/_widgets/UserProfile/me', { 'User-Agent': CHROME });
    const first = await stored(env, sid);

    // Within the minute: another browser changes nothing.
    expect((await a.http.get('/_widgets/UserProfile/me', { 'User-Agent': FIREFOX })).status).toBe(200);
    expect(await stored(env, sid)).toEqual(first);

    // A minute on, the activity moves; the device stays the first one.
    const earlier = new Date(Date.now() - 90_000);
    await env.deps.db.update(sessions).set({ lastActivityAt: earlier }).where(eq(sessions.id, sid));
    const movedFrom = Date.now();
    expect((await a.graphql('{ me { id } }')).status).toBe(200);
    const moved = await stored(env, sid);
    expect(moved.lastActivityAt?.getTime()).toBeGreaterThanOrEqual(movedFrom - 1_000);
    expect(moved).toMatchObject({ ipAddress: '127.0.0.1', userAgent: CHROME });
  });

  it('records on /client/graphql and /trpc too, cuts a long User-Agent, and keeps a request without one', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { kind: 'client' });
    const viaGraphql = await anotherToken(env, a.organizationId, a.userId);
    const viaTrpc = await anotherToken(env, a.organizationId, a.userId);
    const long = `${FIREFOX} ${'x'.repeat(1_000)}`;

    const graphql = await a.http.post(
      '/client/graphql',
      { query: '{ me { id } }' },
      { Authorization: `Bearer ${viaGraphql}`, 'User-Agent': long },
    );
    expect(graphql.status).toBe(200);
    const recorded = await stored(env, sidOf(viaGraphql));
    expect(recorded.userAgent).toBe(long.slice(0, 512));
    expect(recorded.ipAddress).toBe('127.0.0.1');

    const trpc = await a.http.get('/trpc/client.sessions.list', {
      Authorization: `Bearer ${viaTrpc}`,
      'User-Agent': FIREFOX,
    });
    expect(trpc.status).toBe(200);
    expect(await stored(env, sidOf(viaTrpc))).toMatchObject({ ipAddress: '127.0.0.1', userAgent: FIREFOX });
  });

  it('records nothing for a refused token or for the validation endpoint', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { kind: 'client' });
    const sid = String(a.claims.sid);
    // Operation 18 refuses client tokens (another kind) and notes no use.
    const validated = await env.http.post('/agents/credentials/validate', {
      type: 'access_token',
      credential: a.token,
    });
    expect(validated.body.valid).toBe(false);
    expect(await stored(env, sid)).toMatchObject({ ipAddress: null, userAgent: null, lastActivityAt: null });

    // A revoked session's token is refused (403) and its row is not written.
    await sdkFor(env).userManagement.revokeSession({ sessionId: sid });
    const revoked = await stored(env, sid);
    expect((await a.http.get('/_widgets/UserProfile/me', { 'User-Agent': CHROME })).status).toBe(403);
    expect(await stored(env, sid)).toEqual(revoked);
  });
});
