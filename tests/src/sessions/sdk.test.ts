import { NotFoundException } from '@workos-inc/node';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { storedEventData } from '../helpers/events.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { newEnvironment } from '../helpers/world.ts';

/** Every field of the SDK's `Session` that Atrium sends (`impersonator` is optional upstream and never set). */
const SESSION_FIELDS = [
  'object',
  'id',
  'userId',
  'ipAddress',
  'userAgent',
  'organizationId',
  'authMethod',
  'status',
  'expiresAt',
  'endedAt',
  'createdAt',
  'updatedAt',
].sort();

describe('sessions through the official SDK', () => {
  it('listSessions shows the session a client token is bound to; revokeSession ends it', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    const user = await workos.userManagement.createUser({ email: uniqueEmail('s') });
    await workos.userManagement.createOrganizationMembership({ userId: user.id, organizationId: org.id });
    expect((await workos.userManagement.listSessions(user.id)).data).toEqual([]);

    const issued = await env.http.post('/client/token', { organization_id: org.id, user_id: user.id });
    expect(issued.status).toBe(201);
    const claims = decodeJwt(issued.body.token);

    const [session, ...rest] = (await workos.userManagement.listSessions(user.id)).data;
    expect(rest).toEqual([]);
    expect(Object.keys(session ?? {}).sort()).toEqual(SESSION_FIELDS);
    expect(session).toEqual({
      object: 'session',
      id: claims.sid,
      userId: user.id,
      organizationId: org.id,
      ipAddress: null,
      userAgent: null,
      authMethod: 'external_auth',
      status: 'active',
      expiresAt: new Date((claims.exp ?? 0) * 1000).toISOString(),
      endedAt: null,
      createdAt: new Date((claims.iat ?? 0) * 1000).toISOString(),
      updatedAt: new Date((claims.iat ?? 0) * 1000).toISOString(),
    });
    // Issuing the token is the user's sign-in.
    expect((await workos.userManagement.getUser(user.id)).lastSignInAt).toBe(session?.createdAt);

    await expect(workos.userManagement.revokeSession({ sessionId: String(claims.sid) })).resolves.toBeUndefined();
    const [revoked] = (await workos.userManagement.listSessions(user.id)).data;
    expect(revoked).toMatchObject({ id: claims.sid, status: 'revoked', expiresAt: session?.expiresAt });
    expect(revoked?.endedAt).toBe(revoked?.updatedAt);
    expect(Date.parse(revoked?.endedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(session?.createdAt ?? ''));

    // The events carry the session as the API shows it (the SDK's SessionResponse).
    const created = await storedEventData(env, 'session.created');
    const ended = await storedEventData(env, 'session.revoked');
    expect(created).toEqual([
      expect.objectContaining({ object: 'session', id: claims.sid, user_id: user.id, status: 'active' }),
    ]);
    expect(ended).toEqual([
      expect.objectContaining({ object: 'session', id: claims.sid, status: 'revoked', ended_at: revoked?.endedAt }),
    ]);

    // Unknown user and unknown session: 404, as the SDK reports it.
    await expect(workos.userManagement.listSessions('user_01J00000000000000000000000')).rejects.toBeInstanceOf(
      NotFoundException,
    );
    await expect(
      workos.userManagement.revokeSession({ sessionId: 'session_01J00000000000000000000000' }),
    ).rejects.toBeInstanceOf(NotFoundException);
  });

  it("pages through a user's sessions with limit and after, newest first; autoPagination returns all", async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    const user = await workos.userManagement.createUser({ email: uniqueEmail('p') });
    await workos.userManagement.createOrganizationMembership({ userId: user.id, organizationId: org.id });
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const { body } = await env.http.post('/client/token', { organization_id: org.id, user_id: user.id });
      ids.push(String(decodeJwt(body.token).sid));
    }
    const firstPage = await workos.userManagement.listSessions(user.id, { limit: 2 });
    expect(firstPage.data.map((s) => s.id)).toEqual([ids[2], ids[1]]);
    const after = firstPage.listMetadata.after ?? undefined;
    expect(after).toBe(ids[1]);
    const secondPage = await workos.userManagement.listSessions(user.id, { limit: 2, after });
    expect(secondPage.data.map((s) => s.id)).toEqual([ids[0]]);
    expect(secondPage.listMetadata).toEqual({ before: ids[0], after: null });
    const all = await (await workos.userManagement.listSessions(user.id)).autoPagination();
    expect(all.map((s) => s.id)).toEqual([...ids].reverse());
  });
});
