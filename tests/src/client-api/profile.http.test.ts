import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { clientSetup } from '../helpers/client.ts';
import { storedEventData } from '../helpers/events.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { graphqlRequestFor, portalCaller, trpcFor } from './self-helpers.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The user as the API-key surface stores it. */
async function stored(env: TestEnvironment, id: string) {
  return (await env.http.get(`/user_management/users/${id}`)).body;
}

const USER_FIELDS = `id email emailVerified firstName lastName profilePictureUrl createdAt updatedAt
  connectedAccounts { id provider } mfaEnabled passwordSet mfaLastUsedAt passwordLastUsedAt`;

describe('UserProfile widget REST', () => {
  it('GET me answers the Me shape', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { scopes: [] });
    const res = await a.http.get('/_widgets/UserProfile/me');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: a.userId,
      email: a.email,
      firstName: 'Ada',
      lastName: 'Lovelace',
      locale: null,
      profilePictureUrl: null,
      oauthProfiles: null,
    });
  });

  it('POST me stores the names and locale ("" clears) through the users service, with user.updated', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const res = await a.http.post('/_widgets/UserProfile/me', { firstName: 'Grace', lastName: '', locale: 'pt-BR' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: a.userId,
      email: a.email,
      firstName: 'Grace',
      lastName: null,
      locale: 'pt-BR',
      profilePictureUrl: null,
      oauthProfiles: null,
    });
    expect(await stored(env, a.userId)).toMatchObject({ first_name: 'Grace', last_name: null, locale: 'pt-BR' });
    const events = await storedEventData(env, 'user.updated');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ id: a.userId, first_name: 'Grace', last_name: null });
    // An absent field is left as it is.
    const only = await a.http.post('/_widgets/UserProfile/me', { lastName: 'Hopper' });
    expect(only.body).toMatchObject({ firstName: 'Grace', lastName: 'Hopper', locale: 'pt-BR' });
  });

  it.each([
    ['an invalid locale', { locale: 'not a locale!' }, 'locale'],
    ['a first name too long', { firstName: 'x'.repeat(300) }, 'firstName'],
    ['an invalid locale beside a valid name', { firstName: 'Grace', locale: 'en_US_POSIX_!!' }, 'locale'],
  ])('POST me with %s is 400 with a message, and stores nothing', async (_name, body, field) => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const before = await stored(env, a.userId);
    const res = await a.http.post('/_widgets/UserProfile/me', body);
    expect(res.status).toBe(400);
    expect(res.body.message).toEqual(expect.any(String));
    expect(JSON.stringify(res.body)).toContain(field);
    expect(await stored(env, a.userId)).toEqual(before);
    expect(await storedEventData(env, 'user.updated')).toEqual([]);
  });

  it('POST me with a body of the wrong types is a JSON 4xx and stores nothing', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const res = await a.http.post('/_widgets/UserProfile/me', { firstName: 42 });
    expect([400, 422]).toContain(res.status);
    expect(res.body.message).toEqual(expect.any(String));
    expect((await stored(env, a.userId)).first_name).toBe('Ada');
  });
});

describe('the profile on GraphQL', () => {
  it('me answers the User shape with the password facts', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    await env.http.put(`/user_management/users/${a.userId}`, { password: 'correct horse battery' });
    const data = await graphqlRequestFor(env, a.token).request<{ me: unknown }>(`{ me { ${USER_FIELDS} } }`);
    expect(data.me).toEqual({
      id: a.userId,
      email: a.email,
      emailVerified: false,
      firstName: 'Ada',
      lastName: 'Lovelace',
      profilePictureUrl: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      connectedAccounts: [],
      mfaEnabled: false,
      passwordSet: true,
      mfaLastUsedAt: null,
      passwordLastUsedAt: null,
    });
  });

  it('updateProfile answers ProfileUpdated, or InvalidLocale storing nothing', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const mutation = `mutation ($input: UpdateProfileInput!) { updateProfile(input: $input) { __typename
      ... on ProfileUpdated { user { id firstName lastName } } ... on InvalidLocale { _placeholder } } }`;
    const bad = await a.graphql(mutation, { input: { firstName: 'Grace', locale: 'no such locale' } });
    expect(bad).toEqual({
      status: 200,
      body: { data: { updateProfile: { __typename: 'InvalidLocale', _placeholder: true } } },
    });
    expect((await stored(env, a.userId)).first_name).toBe('Ada');
    expect(await storedEventData(env, 'user.updated')).toEqual([]);

    const good = await a.graphql(mutation, { input: { firstName: 'Grace', lastName: '', locale: 'en-GB' } });
    expect(good.body.data.updateProfile).toEqual({
      __typename: 'ProfileUpdated',
      user: { id: a.userId, firstName: 'Grace', lastName: null },
    });
    expect(await stored(env, a.userId)).toMatchObject({ first_name: 'Grace', last_name: null, locale: 'en-GB' });
    expect(await storedEventData(env, 'user.updated')).toHaveLength(1);
  });

  it("user(id) answers users of the token's organization only; their password facts are FORBIDDEN", async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const colleague = await clientSetup(env, { organizationId: a.organizationId });
    const stranger = await clientSetup(env);
    const query = 'query ($id: ID!) { user(id: $id) { id email firstName } }';
    const ok = await a.graphql(query, { id: colleague.userId });
    expect(ok.body).toEqual({ data: { user: { id: colleague.userId, email: colleague.email, firstName: 'Ada' } } });

    for (const id of [stranger.userId, 'user_01NOPE']) {
      const res = await a.graphql(query, { id });
      expect(res.status).toBe(200);
      expect(res.body.data).toBeNull();
      expect(res.body.errors[0]).toMatchObject({ path: ['user'], extensions: { code: 'NOT_FOUND', status: 404 } });
    }
    const facts = await a.graphql('query ($id: ID!) { user(id: $id) { passwordSet } }', { id: colleague.userId });
    expect(facts.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const own = await a.graphql('query ($id: ID!) { user(id: $id) { passwordSet } }', { id: a.userId });
    expect(own.body).toEqual({ data: { user: { passwordSet: false } } });
  });
});

describe('the profile on typed tRPC', () => {
  it('client.me, client.updateProfile and client.user', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const stranger = await clientSetup(env);
    const trpc = trpcFor(env, a.token);
    expect(await trpc.client.me.query()).toEqual({
      id: a.userId,
      email: a.email,
      emailVerified: false,
      firstName: 'Ada',
      lastName: 'Lovelace',
      profilePictureUrl: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      connectedAccounts: [],
    });
    expect(await trpc.client.updateProfile.mutate({ locale: 'xx-!!' })).toEqual({
      __typename: 'InvalidLocale',
      _placeholder: true,
    });
    const updated = await trpc.client.updateProfile.mutate({ firstName: 'Grace' });
    expect(updated).toMatchObject({ __typename: 'ProfileUpdated', user: { id: a.userId, firstName: 'Grace' } });
    expect(await storedEventData(env, 'user.updated')).toHaveLength(1);
    const missing = await trpc.client.user.query({ id: stranger.userId }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(TRPCClientError);
    expect((missing as { data?: { httpStatus?: number } }).data?.httpStatus).toBe(404);
  });
});

describe('an admin-portal principal (no user)', () => {
  it('has no profile: 403 / FORBIDDEN, and nothing is stored', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const portal = await portalCaller(env, a.organizationId);
    await expect(portal.caller.widgets.me({})).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(portal.caller.widgets.updateMe({ firstName: 'X' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(portal.caller.client.me()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const res = await portal.graphql('mutation { updateProfile(input: { firstName: "X" }) { __typename } }');
    expect(res.errors?.[0]?.message).toMatch(/token of a user/);
    expect(await storedEventData(env, 'user.updated')).toEqual([]);
  });
});
