import { NotFoundException, UnauthorizedException, UnprocessableEntityException, WorkOS } from '@workos-inc/node';
import { beforeAll, describe, expect, it } from 'vitest';
import { sdkFor } from '../helpers/sdk.ts';
import { makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment } from '../helpers/world.ts';
import { makeDirectory, pushGroup, pushUser, warmUp } from './directory-data.ts';

// The official SDK's `directorySync` module, unchanged, against Atrium: its seven methods
// (listDirectories, getDirectory, deleteDirectory, listUsers, getUser, listGroups, getGroup).

beforeAll(warmUp);

describe('workos.directorySync', () => {
  it('lists, gets and deletes directories', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const organizationId = await makeOrganization(env);
    const okta = await makeDirectory(env, { organizationId, name: 'Acme Okta', domain: 'acme.example.com' });
    const entra = await makeDirectory(env, { organizationId, name: 'Acme Entra', type: 'azure scim v2.0' });
    await pushUser(env, okta.id, { userName: 'ada@example.com' });

    const listed = await workos.directorySync.listDirectories({ organizationId });
    expect(listed.data.map((d) => d.id)).toEqual([entra.id, okta.id]);
    expect((await workos.directorySync.listDirectories({ search: 'entra' })).data.map((d) => d.id)).toEqual([entra.id]);
    // autoPagination follows list_metadata.after.
    const paged = await workos.directorySync.listDirectories({ organizationId });
    expect((await paged.autoPagination()).map((d) => d.id)).toEqual([entra.id, okta.id]);

    const directory = await workos.directorySync.getDirectory(okta.id);
    expect(directory).toEqual({
      object: 'directory',
      id: okta.id,
      domain: 'acme.example.com',
      externalKey: okta.external_key,
      name: 'Acme Okta',
      organizationId,
      // The SDK maps upstream's `linked` to `active` (and `unlinked` to `inactive`).
      state: 'active',
      type: 'okta scim v2.0',
      createdAt: okta.created_at,
      updatedAt: expect.any(String),
    });
    expect((await workos.directorySync.getDirectory(entra.id)).state).toBe('inactive');

    await workos.directorySync.deleteDirectory(entra.id);
    await expect(workos.directorySync.getDirectory(entra.id)).rejects.toBeInstanceOf(NotFoundException);
    expect((await workos.directorySync.listDirectories()).data.map((d) => d.id)).toEqual([okta.id]);
  });

  it('lists and gets directory users and groups, by directory, group and user', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const directory = await makeDirectory(env);
    const ada = await pushUser(env, directory.id, { userName: 'ada@example.com', title: 'Engineer' });
    const grace = await pushUser(env, directory.id, { userName: 'grace@example.com', givenName: 'Grace' });
    const engineering = await pushGroup(env, directory.id, 'Engineering', [ada.id]);

    const users = await workos.directorySync.listUsers({ directory: directory.id });
    expect(users.data.map((u) => u.id)).toEqual([grace.id, ada.id]);
    const user = await workos.directorySync.getUser(ada.id);
    expect(user).toMatchObject({
      object: 'directory_user',
      id: ada.id,
      directoryId: directory.id,
      organizationId: directory.organization_id,
      idpId: 'ext-ada@example.com',
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      state: 'active',
      customAttributes: { job_title: 'Engineer' },
    });
    expect(user.rawAttributes).toMatchObject({ userName: 'ada@example.com' });
    expect(user.groups.map((g) => g.name)).toEqual(['Engineering']);
    expect((await workos.directorySync.listUsers({ group: engineering.id })).data.map((u) => u.id)).toEqual([ada.id]);

    const groups = await workos.directorySync.listGroups({ directory: directory.id });
    expect(groups.data).toEqual([
      {
        id: engineering.id,
        idpId: 'ext-Engineering',
        directoryId: directory.id,
        organizationId: directory.organization_id,
        name: 'Engineering',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        rawAttributes: expect.objectContaining({ displayName: 'Engineering' }),
      },
    ]);
    expect((await workos.directorySync.listGroups({ user: grace.id })).data).toEqual([]);
    expect((await workos.directorySync.getGroup(engineering.id)).name).toBe('Engineering');
  });

  it("throws the SDK's exceptions: 422 without a filter, 404 for unknown or foreign ids, 401 for a SCIM token", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const workos = sdkFor(env);
    const foreign = await makeDirectory(other);
    const foreignUser = await pushUser(other, foreign.id, { userName: 'ada@example.com' });

    const noFilter = await workos.directorySync.listUsers({}).catch((e: unknown) => e);
    expect(noFilter).toBeInstanceOf(UnprocessableEntityException);
    expect((noFilter as UnprocessableEntityException).status).toBe(422);
    await expect(workos.directorySync.listGroups({})).rejects.toBeInstanceOf(UnprocessableEntityException);

    await expect(workos.directorySync.getDirectory(foreign.id)).rejects.toBeInstanceOf(NotFoundException);
    await expect(workos.directorySync.deleteDirectory(foreign.id)).rejects.toBeInstanceOf(NotFoundException);
    await expect(workos.directorySync.getUser(foreignUser.id)).rejects.toBeInstanceOf(NotFoundException);
    await expect(workos.directorySync.listUsers({ directory: foreign.id })).rejects.toBeInstanceOf(NotFoundException);
    expect((await sdkFor(other).directorySync.getDirectory(foreign.id)).id).toBe(foreign.id);

    const url = new URL(env.world.url);
    const scim = new WorkOS(foreign.bearer_token, {
      apiHostname: url.hostname,
      port: Number(url.port),
      https: false,
    });
    await expect(scim.directorySync.listDirectories()).rejects.toBeInstanceOf(UnauthorizedException);
  });
});
