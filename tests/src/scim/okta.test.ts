// Okta's SCIM requests, replayed over loopback HTTP against a directory of type `okta scim v2.0`:
// Okta's published spec test (the Runscope suite) and the provisioning and group push Okta's SCIM
// 2.0 reference documents. The fixtures, with their sources, are in fixtures/okta/.
import { describe, expect, it } from 'vitest';
import { newEnvironment } from '../helpers/world.ts';
import { expectDirectoryUser, expectProvisioned, newDirectory, unique } from './fixtures/directory.ts';
import { oktaDeleteGroup, oktaProvisioning } from './fixtures/okta/provisioning.ts';
import { oktaSpecTest } from './fixtures/okta/spec-test.ts';
import { replay, saved, send } from './fixtures/sequence.ts';

describe('Okta (fixtures of what Okta sends)', () => {
  it("passes Okta's SCIM 2.0 spec test, and its user is a directory user and a provisioned member", async () => {
    const env = await newEnvironment();
    const directory = await newDirectory(env, 'okta scim v2.0');
    const u = unique();
    // Runscope's initial variables, shaped as Okta's suite sets them.
    const vars = await replay(directory, oktaSpecTest, {
      existingUsername: `existing${u}@atko.example.com`,
      randomUsername: `Runscope${u}Username@atko.example.com`,
      randomUsernameCaps: `RUNSCOPE${u.toUpperCase()}USERNAME@ATKO.EXAMPLE.COM`,
      randomEmail: `Runscope${u}Email@atko.example.com`,
      randomGivenName: `Given${u}`,
      randomFamilyName: `Family${u}`,
      InvalidUserEmail: `abcdefgh${u}@example.com`,
      UserIdThatDoesNotExist: 'directory_user_01HZZZZZZZZZZZZZZZZZZZZZZZ',
    });

    // The first SCIM write linked the directory.
    const directoryRead = await env.http.get(`/directories/${directory.id}`);
    expect(directoryRead.status, directoryRead.text).toBe(200);
    expect(directoryRead.body).toMatchObject({ id: directory.id, state: 'linked', type: 'okta scim v2.0' });

    // The e-mail is the primary one the create sent, not the user name.
    const email = `Runscope${u}Email@atko.example.com`;
    await expectDirectoryUser(env, directory, saved(vars, 'idUserOne'), { state: 'active', email });
    await expectProvisioned(env, directory, email, 'active');
  });

  it("provisions, updates, deactivates and pushes groups as Okta's SCIM 2.0 reference documents", async () => {
    const env = await newEnvironment();
    const directory = await newDirectory(env, 'okta scim v2.0');
    const u = unique();
    const userNameA = `test.user.${u}@okta.example.com`;
    const userNameB = `second.user.${u}@okta.example.com`;
    const vars = await replay(directory, oktaProvisioning, { userNameA, userNameB, groupName: `Test SCIMv2 ${u}` });
    const [userA, userB, group] = [saved(vars, 'userA'), saved(vars, 'userB'), saved(vars, 'group')];

    // User A is active (deactivated by PATCH, then activated again), user B was deactivated by PUT.
    await expectDirectoryUser(env, directory, userA, { state: 'active', email: userNameA, groups: [group] });
    await expectDirectoryUser(env, directory, userB, { state: 'inactive', email: userNameB, groups: [group] });
    await expectProvisioned(env, directory, userNameA, 'active');
    await expectProvisioned(env, directory, userNameB, 'inactive');
    const groups = await env.http.get(`/directory_groups?directory=${directory.id}`);
    expect(groups.status, groups.text).toBe(200);
    expect(groups.body.data).toMatchObject([{ id: group, name: `Test SCIMv2 ${u} renamed` }]);

    // Unlinking the pushed group deletes it; the users stay.
    await replay(directory, oktaDeleteGroup, vars);
    expect((await env.http.get(`/directory_groups?directory=${directory.id}`)).body.data).toEqual([]);
    await expectDirectoryUser(env, directory, userA, { state: 'active', email: userNameA, groups: [] });
  });

  it('answers the userName filter Okta sends before each push the same with any letter case', async () => {
    const env = await newEnvironment();
    const directory = await newDirectory(env, 'okta scim v2.0');
    const userName = `Mixed.Case.${unique()}@Okta.Example.com`;
    const created = await send(
      directory,
      {
        note: 'Create the User',
        method: 'POST',
        path: '/Users',
        body: {
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
          userName,
          name: { givenName: 'Mixed', familyName: 'Case' },
          emails: [{ primary: true, value: userName, type: 'work' }],
          active: true,
        },
        expect: { status: 201 },
      },
      {},
    );
    expect(created.status, created.text).toBe(201);
    for (const asked of [userName, userName.toLowerCase(), userName.toUpperCase()]) {
      const found = await send(
        directory,
        {
          note: 'filter',
          method: 'GET',
          path: `/Users?filter=userName eq "${asked}"&startIndex=1&count=100`,
          expect: { status: 200 },
        },
        {},
      );
      expect(found.status, found.text).toBe(200);
      expect(found.body, asked).toMatchObject({ totalResults: 1, Resources: [{ id: created.body.id, userName }] });
    }
  });
});
