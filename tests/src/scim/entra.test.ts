// Microsoft Entra ID's SCIM requests, replayed over loopback HTTP against a directory of type
// `azure scim v2.0`: the requests of Microsoft's SCIM tutorial and of its "known issues" page (the
// capitalised ops, "True"/"False" strings, pathless PATCH values with dotted keys, filter paths),
// and concurrent PATCHes to one group. The fixtures, with their sources, are in fixtures/entra/.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newEnvironment } from '../helpers/world.ts';
import { expectDirectoryUser, expectProvisioned, newDirectory, unique } from './fixtures/directory.ts';
import {
  entraConcurrentMembership,
  entraDeletes,
  entraProvisioning,
  entraUsers,
} from './fixtures/entra/provisioning.ts';
import { replay, saved } from './fixtures/sequence.ts';

/** The initial variables of one run: Entra's ids are GUIDs, its test user names `Test_User_<guid>`. */
function entraVars(): Record<string, string> {
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

describe('Microsoft Entra ID (fixtures of what Entra sends)', () => {
  it("runs Entra's provisioning cycle, and its user is a directory user and a provisioned member", async () => {
    const env = await newEnvironment();
    const directory = await newDirectory(env, 'azure scim v2.0');
    const vars = await replay(directory, entraProvisioning, entraVars());
    const [user, group, updatedEmail] = ['user', 'group', 'updatedEmail'].map((name) => saved(vars, name)) as [
      string,
      string,
      string,
    ];

    const directoryRead = await env.http.get(`/directories/${directory.id}`);
    expect(directoryRead.body).toMatchObject({ id: directory.id, state: 'linked', type: 'azure scim v2.0' });
    // The work e-mail Entra replaced by its filter path is the directory user's e-mail.
    await expectDirectoryUser(env, directory, user, { state: 'active', email: updatedEmail, groups: [group] });
    await expectProvisioned(env, directory, updatedEmail, 'active');
    const read = await env.http.get(`/directory_users/${user}`);
    expect(read.body).toMatchObject({ first_name: 'Kkom', last_name: 'Unua' });
  });

  it('keeps every membership change of concurrent PATCHes to one group', async () => {
    const env = await newEnvironment();
    const directory = await newDirectory(env, 'azure scim v2.0');
    const count = 12;
    const vars = await replay(directory, entraUsers(count), entraVars());
    const end = await replay(directory, entraConcurrentMembership(count), vars);
    const odd = Array.from({ length: count }, (_, i) => i).filter((i) => i % 2 === 1);

    // What the REST API shows agrees with SCIM: the odd users are the group's members.
    const members = await env.http.get(`/directory_users?group=${saved(end, 'group')}&limit=100`);
    expect(members.status, members.text).toBe(200);
    expect(members.body.data.map((u: { id: string }) => u.id).sort()).toEqual(
      odd.map((i) => saved(end, `user${i}`)).sort(),
    );
  });

  it('deletes a user and a group when Entra removes them from scope', async () => {
    const env = await newEnvironment();
    const directory = await newDirectory(env, 'azure scim v2.0');
    const vars = await replay(directory, entraProvisioning, entraVars());
    const [user, updatedEmail] = [saved(vars, 'user'), saved(vars, 'updatedEmail')];
    await replay(directory, entraDeletes, { ...vars, deleted: user });

    expect((await env.http.get(`/directory_users/${user}`)).status).toBe(404);
    expect((await env.http.get(`/directory_groups?directory=${directory.id}`)).body.data).toEqual([]);
    // The provisioned member is deactivated, not deleted.
    await expectProvisioned(env, directory, updatedEmail, 'inactive');
  });
});
