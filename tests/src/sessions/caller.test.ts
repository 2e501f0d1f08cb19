import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { failure, newMember } from '../helpers/people.ts';
import { newEnvironment } from '../helpers/world.ts';

describe('sessions and the user lookup through the tRPC caller', () => {
  it('sessions.list and sessions.revoke answer what REST answers; users.getByExternalId finds the user', async () => {
    const env = await newEnvironment();
    const { user, organizationId } = await newMember(env);
    const { token } = await env.caller.clientTokens.create({ organization_id: organizationId, user_id: user.id });
    const sid = String(decodeJwt(token).sid);

    const list = await env.caller.sessions.list({ id: user.id });
    expect(list).toMatchObject({ object: 'list', data: [{ id: sid, status: 'active', user_id: user.id }] });
    expect(list).toEqual((await env.http.get(`/user_management/users/${user.id}/sessions`)).body);

    const revoked = await env.caller.sessions.revoke({ session_id: sid });
    expect(revoked).toMatchObject({ id: sid, status: 'revoked' });
    expect((await env.caller.sessions.list({ id: user.id })).data).toEqual([revoked]);

    const named = await env.caller.users.update({ id: user.id, external_id: 'ext-caller', locale: 'fr-CA' });
    expect(await env.caller.users.getByExternalId({ external_id: 'ext-caller' })).toEqual(named);
    expect(named.last_sign_in_at).toBe(list.data[0]?.created_at);

    const stranger = await newEnvironment();
    const notFound = { status: 404, code: 'entity_not_found' };
    expect(await failure(stranger.caller.sessions.list({ id: user.id }))).toEqual(notFound);
    expect(await failure(stranger.caller.sessions.revoke({ session_id: sid }))).toEqual(notFound);
    expect(await failure(stranger.caller.users.getByExternalId({ external_id: 'ext-caller' }))).toEqual(notFound);
  });
});
