// Microsoft Entra ID's SCIM requests, replayed over loopback HTTP against a directory of type
// `azure scim v2.0`: the requests of Microsoft's SCIM tutorial and of its "known issues" page (the
// capitalised ops, "True"/"False" strings, pathless PATCH values with dotted keys, filter paths),
// and concurrent PATCHes to one group. The fixtures, with their sources, are in fixtures/entra/.
// Each sequence replays once (beforeAll); its end state outside SCIM is asserted after it.
import { randomUUID } from 'node:crypto';
import { directoryUsers } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import {
  expectDirectoryUser,
  expectInWidget,
  expectMembership,
  expectProvisioned,
  newDirectory,
  storedDirectoryState,
  storedGroups,
  storedMembers,
  type TestDirectory,
  unique,
} from './fixtures/directory.ts';
import {
  entraConcurrentMembership,
  entraDeletes,
  entraProvisioning,
  entraUsers,
} from './fixtures/entra/provisioning.ts';
import { replay, saved, type Vars } from './fixtures/sequence.ts';

/** The initial variables of one run: Entra's ids are GUIDs, its test user names `Test_User_<guid>`. */
function entraVars(): Vars {
  const u = unique();
  return {
    randomGuid: randomUUID(),
    externalId: randomUUID(),
    userName: `Test_User_${randomUUID()}`,
    renamedUserName: `${randomUUID()}@testuser.example.com`,
    email: `Test_User_${u}@testuser.example.com`,
    updatedEmail: `updated_${u}@testuser.example.com`,
    groupName: `displayName ${u}`,
    groupExternalId: randomUUID(),
  };
}

describe("Microsoft Entra ID's provisioning cycle (tutorial and known-issues requests)", () => {
  let env: TestEnvironment;
  let directory: TestDirectory;
  let vars: Vars;

  beforeAll(async () => {
    env = await newEnvironment();
    directory = await newDirectory(env, 'azure scim v2.0');
    vars = await replay(directory, entraProvisioning, entraVars());
  });

  it('passes every step, and the first write linked the directory', async () => {
    expect(saved(vars, 'user')).toMatch(/^directory_user_/);
    expect(await storedDirectoryState(env, directory)).toBe('linked');
  });

  it('stores the directory user with what the PATCHes set: the work e-mail, the names, the enterprise extension', async () => {
    const user = saved(vars, 'user');
    await expectDirectoryUser(env, directory, user, {
      state: 'active',
      email: saved(vars, 'updatedEmail'),
      groups: [saved(vars, 'group')],
    });
    const [row] = await env.deps.db.select().from(directoryUsers).where(eq(directoryUsers.id, user));
    expect(row).toMatchObject({ firstName: 'Kkom', lastName: 'Unua', userName: saved(vars, 'renamedUserName') });
    // The pathless value's dotted keys are stored in their complex attributes, not as top-level keys.
    expect(row?.attributes).toMatchObject({
      name: { givenName: 'Kkom', familyName: 'Unua' },
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { employeeNumber: 'Aklq' },
      nickName: 'Babs',
      active: true,
    });
    expect(row?.attributes).not.toHaveProperty(['name.givenName']);
    expect(await storedGroups(env, directory)).toEqual([
      { id: saved(vars, 'group'), name: `${saved(vars, 'groupName')}updatedDisplayName` },
    ]);
  });

  it('provisions the user as an active directory-managed member', async () => {
    await expectProvisioned(env, directory, saved(vars, 'user'), 'active');
  });

  it('shows the directory, one active user and one group in the DirectorySync widget', async () => {
    await expectInWidget(env, directory, { active: 1, inactive: 0, groups: 1 });
  });

  describe('when Entra removes the user and the group from scope', () => {
    let atriumUser: string | undefined;
    beforeAll(async () => {
      // The provisioned user, read before the directory user is gone (undefined without provisioning).
      const [row] = await env.deps.db
        .select({ userId: directoryUsers.userId })
        .from(directoryUsers)
        .where(eq(directoryUsers.id, saved(vars, 'user')));
      atriumUser = row?.userId ?? undefined;
      await replay(directory, entraDeletes, { ...vars, deleted: saved(vars, 'user') });
    });

    it('deletes the directory user and the group', async () => {
      const [row] = await env.deps.db
        .select()
        .from(directoryUsers)
        .where(eq(directoryUsers.id, saved(vars, 'user')));
      expect(row).toBeUndefined();
      expect(await storedGroups(env, directory)).toEqual([]);
    });

    it('deactivates the provisioned membership, and keeps the Atrium user', async () => {
      expect(atriumUser).toMatch(/^user_/);
      await expectMembership(env, directory, atriumUser as string, 'inactive');
    });
  });
});

describe('Microsoft Entra ID: concurrent PATCHes to one group', () => {
  it('keeps every membership change', async () => {
    const env = await newEnvironment();
    const directory = await newDirectory(env, 'azure scim v2.0');
    const count = 12;
    const users = await replay(directory, entraUsers(count), entraVars());
    const end = await replay(directory, entraConcurrentMembership(count), users);
    const odd = Array.from({ length: count }, (_, i) => i).filter((i) => i % 2 === 1);
    // What is stored agrees with what SCIM answered: the odd users are the group's members.
    expect(await storedMembers(env, saved(end, 'group'))).toEqual(odd.map((i) => saved(end, `user${i}`)).sort());
  });
});
