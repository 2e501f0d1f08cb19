import {
  createDirectoryGroup,
  createDirectoryUser,
  deactivateDirectory,
  deleteDirectory,
  deleteDirectoryGroup,
  deleteDirectoryUser,
  replaceDirectoryUser,
  writeDirectoryGroup,
} from '@atrium/routers';
import { WebhookWorker } from '@atrium/server';
import { WorkOS } from '@workos-inc/node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/people.ts';
import { Receiver } from '../helpers/receiver.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { getWorld } from '../helpers/world.ts';
import { type DirectoryWorld, directoryWorld, eventsOf, groupFields, userFields } from './provisioning-world.ts';

// The worker's database is built here, within the hook's time, not the first test's.
beforeAll(() => getWorld());

const DSYNC = [
  'dsync.activated',
  'dsync.user.created',
  'dsync.user.updated',
  'dsync.group.created',
  'dsync.group.updated',
  'dsync.group.user_added',
  'dsync.group.user_removed',
];

/** A directory that saw one of each SCIM write: a user created and updated, a group created, renamed, joined and left. */
async function syncedWorld(): Promise<DirectoryWorld & { userId: string; groupId: string }> {
  const w = await directoryWorld();
  const email = uniqueEmail('events');
  const fields = userFields({ email, firstName: 'Ada', lastName: 'Lovelace' });
  const user = await createDirectoryUser(w.scope, w.directory, fields);
  await replaceDirectoryUser(w.scope, await w.fresh(), user.id, {
    ...fields,
    lastName: 'King',
    attributes: { ...fields.attributes, name: { givenName: 'Ada', familyName: 'King' }, title: 'Countess' },
  });
  const group = await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Engineering'), [user.id]);
  await writeDirectoryGroup(w.scope, await w.fresh(), group.id, groupFields('Platform'), {
    remove: [user.id],
    add: [],
  });
  return { ...w, userId: user.id, groupId: group.id };
}

describe('dsync events carry upstream payloads', () => {
  it('are listed by GET /events?events=… in the shapes of the OpenAPI document (the contract guard checks each)', async () => {
    const w = await syncedWorld();
    const res = await w.env.http.get(`/events?events=${DSYNC.join(',')}&limit=100&order=asc`);
    expect(res.status).toBe(200);
    // The directory's first write activates it: `dsync.activated` before that write's user.
    expect(res.body.data.map((e: { event: string }) => e.event)).toEqual([
      'dsync.activated',
      'dsync.user.created',
      'dsync.user.updated',
      'dsync.group.created',
      'dsync.group.user_added',
      'dsync.group.updated',
      'dsync.group.user_removed',
    ]);
    const byName = new Map(res.body.data.map((e: { event: string; data: unknown }) => [e.event, e.data]));
    expect(byName.get('dsync.user.updated')).toMatchObject({
      object: 'directory_user',
      id: w.userId,
      directory_id: w.directory.id,
      organization_id: w.organizationId,
      last_name: 'King',
      state: 'active',
      previous_attributes: { name: { givenName: 'Ada', familyName: 'Lovelace' }, title: null },
    });
    expect(byName.get('dsync.user.created')).not.toHaveProperty('groups');
    expect(byName.get('dsync.group.updated')).toMatchObject({
      object: 'directory_group',
      id: w.groupId,
      name: 'Platform',
      previous_attributes: { displayName: 'Engineering' },
    });
    expect(byName.get('dsync.group.user_removed')).toEqual({
      directory_id: w.directory.id,
      user: expect.objectContaining({ object: 'directory_user', id: w.userId }),
      group: expect.objectContaining({ object: 'directory_group', id: w.groupId, name: 'Platform' }),
    });
    expect(byName.get('dsync.activated')).toEqual({
      object: 'directory',
      id: w.directory.id,
      organization_id: w.organizationId,
      external_key: w.directory.externalKey,
      type: 'okta scim v2.0',
      state: 'active',
      name: 'Acme Okta',
      domains: [],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // Filtered by organization, as every event naming one.
    const ofOrganization = await w.env.http.get(
      `/events?events=dsync.group.user_added&organization_id=${w.organizationId}`,
    );
    expect(ofOrganization.body.data).toHaveLength(1);
  });

  it("the official SDK's listEvents deserialises them", async () => {
    const w = await syncedWorld();
    const list = await sdkFor(w.env).events.listEvents({ events: DSYNC as never, limit: 100 });
    const byName = new Map(list.data.map((e) => [e.event, e]));
    expect(byName.get('dsync.user.updated')).toMatchObject({
      data: { id: w.userId, directoryId: w.directory.id, lastName: 'King', previousAttributes: { title: null } },
    });
    expect(byName.get('dsync.group.user_added')).toMatchObject({
      data: { directoryId: w.directory.id, user: { id: w.userId }, group: { id: w.groupId } },
    });
    expect(byName.get('dsync.activated')).toMatchObject({
      data: { id: w.directory.id, externalKey: w.directory.externalKey, state: 'active', domains: [] },
    });
  });

  it('the deletions and the directory going: dsync.user.deleted, dsync.group.deleted, dsync.deactivated, dsync.deleted, as listed and as the SDK reads them', async () => {
    const w = await syncedWorld();
    await deleteDirectoryGroup(w.scope, await w.fresh(), w.groupId);
    await deleteDirectoryUser(w.scope, await w.fresh(), w.userId);
    await deactivateDirectory(w.scope, w.directory.id);
    await deleteDirectory(w.scope, w.directory.id);
    const GONE = ['dsync.user.deleted', 'dsync.group.deleted', 'dsync.deactivated', 'dsync.deleted'];
    // Every dsync event upstream names, each in the shape of the OpenAPI document (the contract guard).
    const res = await w.env.http.get(`/events?events=${[...DSYNC, ...GONE].join(',')}&limit=100&order=asc`);
    expect(res.status).toBe(200);
    const names = res.body.data.map((e: { event: string }) => e.event);
    expect(names.slice(DSYNC.length)).toEqual(['dsync.group.deleted', 'dsync.user.deleted', ...GONE.slice(2)]);
    const byName = new Map(res.body.data.map((e: { event: string; data: unknown }) => [e.event, e.data]));
    expect(byName.get('dsync.user.deleted')).toMatchObject({
      object: 'directory_user',
      id: w.userId,
      directory_id: w.directory.id,
      state: 'active',
    });
    expect(byName.get('dsync.user.deleted')).not.toHaveProperty('groups');
    expect(byName.get('dsync.group.deleted')).toMatchObject({
      object: 'directory_group',
      id: w.groupId,
      name: 'Platform',
    });
    expect(byName.get('dsync.deactivated')).toMatchObject({
      object: 'directory',
      id: w.directory.id,
      state: 'inactive',
    });
    expect(byName.get('dsync.deleted')).toMatchObject({ object: 'directory', id: w.directory.id, state: 'deleting' });
    for (const data of byName.values()) expect(JSON.stringify(data)).not.toMatch(/scim_[0-9A-Za-z]{20,}/);

    const list = await sdkFor(w.env).events.listEvents({ events: GONE as never, limit: 100 });
    // SDK 11 declares no `dsync.deactivated` (upstream's OpenAPI document does): it lists it as sent.
    const read = new Map<string, unknown>(list.data.map((e) => [e.event, e]));
    expect([...read.keys()].sort()).toEqual([...GONE].sort());
    expect(read.get('dsync.user.deleted')).toMatchObject({ data: { id: w.userId, directoryId: w.directory.id } });
    expect(read.get('dsync.group.deleted')).toMatchObject({ data: { id: w.groupId, directoryId: w.directory.id } });
    expect(read.get('dsync.deactivated')).toMatchObject({
      data: { id: w.directory.id, organization_id: w.organizationId, state: 'inactive' },
    });
    expect(read.get('dsync.deleted')).toMatchObject({ data: { id: w.directory.id, organizationId: w.organizationId } });
  });

  describe('webhooks', () => {
    const receivers: Receiver[] = [];
    afterEach(async () => {
      await Promise.all(receivers.splice(0).map((r) => r.close()));
    });

    it('an endpoint subscribed to dsync events receives them signed; the SDK verifies and deserialises them', async () => {
      const w = await directoryWorld();
      const r = await new Receiver().start();
      receivers.push(r);
      const endpoint = await w.env.caller.webhookEndpoints.create({
        endpoint_url: r.url,
        events: ['dsync.user.created', 'dsync.group.user_added'],
      });
      const user = await createDirectoryUser(w.scope, w.directory, userFields());
      await createDirectoryGroup(w.scope, await w.fresh(), groupFields('Everyone'), [user.id]);
      const worker = new WebhookWorker(w.env.deps, {
        allowPrivate: true,
        environmentId: w.env.environmentId,
        purgeEveryMs: Number.POSITIVE_INFINITY,
      });
      await worker.tick();
      await worker.drain();
      const sdk = new WorkOS('sk_test_unused', {
        apiHostname: '127.0.0.1',
        port: 1,
        https: false,
        clientId: 'client_x',
      });
      const received = await Promise.all(
        r.requests.map((request) =>
          sdk.webhooks.constructEvent({
            payload: request.body,
            sigHeader: request.headers['workos-signature'] as string,
            secret: endpoint.secret,
          }),
        ),
      );
      expect(received.map((e) => e.event).sort()).toEqual(['dsync.group.user_added', 'dsync.user.created']);
      expect(received.find((e) => e.event === 'dsync.user.created')).toMatchObject({
        data: { id: user.id, directoryId: w.directory.id, state: 'active' },
      });
      expect((await eventsOf(w)).map((e) => e.event)).toContain('dsync.group.created');
    });
  });
});
