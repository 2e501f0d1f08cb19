// Okta's SCIM requests, replayed over loopback HTTP against a directory of type `okta scim v2.0`:
// Okta's published spec test (the Runscope suite) and the provisioning and group push Okta's SCIM
// 2.0 reference documents. The fixtures, with their sources, are in fixtures/okta/. Each sequence
// replays once (beforeAll); its end state outside SCIM is asserted by the tests after it.
import { beforeAll, describe, expect, it } from 'vitest';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import {
  expectDirectoryUser,
  expectInWidget,
  expectProvisioned,
  newDirectory,
  storedDirectoryState,
  storedGroups,
  type TestDirectory,
  unique,
} from './fixtures/directory.ts';
import { oktaDeleteGroup, oktaProvisioning } from './fixtures/okta/provisioning.ts';
import { oktaSpecTest } from './fixtures/okta/spec-test.ts';
import { replay, saved, send, type Vars } from './fixtures/sequence.ts';

describe("Okta's SCIM 2.0 spec test (Runscope)", () => {
  let env: TestEnvironment;
  let directory: TestDirectory;
  let vars: Vars;
  const u = unique();
  const email = `Runscope${u}Email@atko.example.com`;

  beforeAll(async () => {
    env = await newEnvironment();
    directory = await newDirectory(env, 'okta scim v2.0');
    // Runscope's initial variables, shaped as Okta's suite sets them.
    vars = await replay(directory, oktaSpecTest, {
      existingUsername: `existing${u}@atko.example.com`,
      randomUsername: `Runscope${u}Username@atko.example.com`,
      randomUsernameCaps: `RUNSCOPE${u.toUpperCase()}USERNAME@ATKO.EXAMPLE.COM`,
      randomEmail: email,
      randomGivenName: `Given${u}`,
      randomFamilyName: `Family${u}`,
      InvalidUserEmail: `abcdefgh${u}@example.com`,
      UserIdThatDoesNotExist: 'directory_user_01HZZZZZZZZZZZZZZZZZZZZZZZ',
    });
  });

  it('passes every step, and the first write linked the directory', async () => {
    expect(saved(vars, 'idUserOne')).toMatch(/^directory_user_/);
    expect(await storedDirectoryState(env, directory)).toBe('linked');
  });

  it('stores the created user as a directory user, its e-mail the primary one Okta sent', async () => {
    await expectDirectoryUser(env, directory, saved(vars, 'idUserOne'), { state: 'active', email, groups: [] });
  });

  it('provisions the created user as a directory-managed member of the organization', async () => {
    await expectProvisioned(env, directory, saved(vars, 'idUserOne'), 'active');
  });

  it('shows the directory and its two active users in the DirectorySync widget', async () => {
    await expectInWidget(env, directory, { active: 2, inactive: 0, groups: 0 });
  });
});

describe("Okta's user provisioning and group push (SCIM 2.0 Protocol Reference)", () => {
  let env: TestEnvironment;
  let directory: TestDirectory;
  let vars: Vars;
  const u = unique();
  const userNameA = `test.user.${u}@okta.example.com`;
  const userNameB = `second.user.${u}@okta.example.com`;
  const groupName = `Test SCIMv2 ${u}`;

  beforeAll(async () => {
    env = await newEnvironment();
    directory = await newDirectory(env, 'okta scim v2.0');
    vars = await replay(directory, oktaProvisioning, { userNameA, userNameB, groupName });
  });

  it('stores user A active (deactivated by PATCH, then activated again) and user B inactive (PUT with active false)', async () => {
    const group = saved(vars, 'group');
    await expectDirectoryUser(env, directory, saved(vars, 'userA'), {
      state: 'active',
      email: userNameA,
      groups: [group],
    });
    await expectDirectoryUser(env, directory, saved(vars, 'userB'), {
      state: 'inactive',
      email: userNameB,
      groups: [group],
    });
    expect(await storedGroups(env, directory)).toEqual([{ id: group, name: `${groupName} renamed` }]);
  });

  it('provisions A as an active and B as an inactive directory-managed member', async () => {
    await expectProvisioned(env, directory, saved(vars, 'userA'), 'active');
    await expectProvisioned(env, directory, saved(vars, 'userB'), 'inactive');
  });

  it('shows one active and one inactive user and one group in the DirectorySync widget', async () => {
    await expectInWidget(env, directory, { active: 1, inactive: 1, groups: 1 });
  });

  it('deletes the group when Okta unlinks it, and keeps the users', async () => {
    const other = await newEnvironment();
    const mine = await newDirectory(other, 'okta scim v2.0');
    const own = await replay(mine, oktaProvisioning, {
      userNameA: `a.${unique()}@okta.example.com`,
      userNameB: `b.${unique()}@okta.example.com`,
      groupName: `Unlinked ${unique()}`,
    });
    await replay(mine, oktaDeleteGroup, own);
    expect(await storedGroups(other, mine)).toEqual([]);
    await expectDirectoryUser(other, mine, saved(own, 'userA'), {
      state: 'active',
      email: own.userNameA as string,
      groups: [],
    });
  });
});

describe('Okta: the userName filter before each push', () => {
  it('finds the user whatever the letter case Okta sends', async () => {
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
          note: 'Determine if the User already exists',
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
