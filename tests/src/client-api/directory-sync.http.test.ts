import { portalLinks } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALL_WIDGET_SCOPES, clientSetup, WIDGET_HEADERS } from '../helpers/client.ts';
import { DSYNC_ROLE, DSYNC_SCOPE, directoryWithUsers, ensureDsyncRole } from '../helpers/directories.ts';
import { getWorld, newEnvironment, TEST_ISSUER, type TestEnvironment } from '../helpers/world.ts';

// The DirectorySync widget's REST (issue #36): `GET /_widgets/directory-sync/directories` and
// `…/directories/:id` with the shapes `@workos-inc/widgets` 1.18 reads (`DirectoriesResponse`,
// `Directory`), scope `widgets:dsync:manage`, the organization's directories only.

async function dsyncMember(env: TestEnvironment, organizationId?: string) {
  await ensureDsyncRole(env);
  return clientSetup(env, { scopes: [DSYNC_SCOPE], roleSlug: DSYNC_ROLE, organizationId });
}

const links = (env: TestEnvironment) =>
  env.deps.db.select().from(portalLinks).where(eq(portalLinks.environmentId, env.environmentId));

// The worker's database starts once (slow on a loaded machine): in a hook, not in the first test.
beforeAll(() => getWorld());

describe('GET /_widgets/directory-sync/directories', () => {
  it("lists the organization's directories with state, counts and last sync, and a dsync portal link", async () => {
    const env = await newEnvironment();
    const me = await dsyncMember(env);
    const empty = await me.http.get('/_widgets/directory-sync/directories');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({
      data: [],
      link: expect.stringMatching(/\/portal\/launch\?apiToken=[0-9A-Za-z]{43}$/),
    });

    const { directory } = await directoryWithUsers(env, me.organizationId, { active: 3, inactive: 1, groups: 2 });
    const res = await me.http.get('/_widgets/directory-sync/directories');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      {
        id: directory.id,
        name: 'Employees',
        type: 'okta scim v2.0',
        state: 'linked',
        createdAt: directory.created_at,
        updatedAt: expect.any(String),
        lastSyncRunAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        metadata: { users: { active: 3, inactive: 1 }, groups: 2 },
      },
    ]);
    expect(JSON.stringify(res.body)).not.toContain(directory.bearer_token);
    // The link is a single-use dsync link of the caller's organization, opened by a plain GET.
    const stored = await links(env);
    expect(stored).toHaveLength(2);
    expect(stored.every((l) => l.intent === 'dsync' && l.organizationId === me.organizationId)).toBe(true);
    const opened = await fetch(`${env.world.url}${new URL(res.body.link).pathname}${new URL(res.body.link).search}`, {
      redirect: 'manual',
    });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe('/portal/dsync');
    expect(res.body.link.startsWith(TEST_ISSUER)).toBe(true);

    const one = await me.http.get(`/_widgets/directory-sync/directories/${directory.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(res.body.data[0]);
  });

  it('a directory before its first sync is unlinked, with zero counts and no last sync', async () => {
    const env = await newEnvironment();
    const me = await dsyncMember(env);
    const { directory } = await directoryWithUsers(env, me.organizationId, { type: 'azure scim v2.0', name: 'Entra' });
    const res = await me.http.get(`/_widgets/directory-sync/directories/${directory.id}`);
    expect(res.body).toMatchObject({
      type: 'azure scim v2.0',
      state: 'unlinked',
      lastSyncRunAt: null,
      metadata: { users: { active: 0, inactive: 0 }, groups: 0 },
    });
  });

  it("another organization's directory is 404 and never listed; a member without the scope is 403", async () => {
    const env = await newEnvironment();
    const me = await dsyncMember(env);
    const other = await dsyncMember(env);
    const theirs = await directoryWithUsers(env, other.organizationId, { active: 1 });
    const mine = await directoryWithUsers(env, me.organizationId, { active: 1 });
    const list = await me.http.get('/_widgets/directory-sync/directories');
    expect(list.body.data.map((d: { id: string }) => d.id)).toEqual([mine.directory.id]);
    const foreign = await me.http.get(`/_widgets/directory-sync/directories/${theirs.directory.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: 'entity_not_found' });
    expect(
      (await me.http.get('/_widgets/directory-sync/directories/directory_01HE8GSH8FQPASKSY27THRKRBP')).status,
    ).toBe(404);
    // Another environment's directory: 404 as well.
    const elsewhere = await newEnvironment();
    const far = await dsyncMember(elsewhere);
    const farDirectory = await directoryWithUsers(elsewhere, far.organizationId);
    expect((await me.http.get(`/_widgets/directory-sync/directories/${farDirectory.directory.id}`)).status).toBe(404);

    // A member whose token lacks the scope (the role does not grant it): 403, no link minted.
    const before = (await links(env)).length;
    const plain = await clientSetup(env, {
      scopes: [DSYNC_SCOPE],
      roleSlug: 'member',
      organizationId: me.organizationId,
    });
    expect(plain.claims.permissions).toEqual([]);
    for (const path of [
      '/_widgets/directory-sync/directories',
      `/_widgets/directory-sync/directories/${mine.directory.id}`,
    ]) {
      const refused = await plain.http.get(path);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'forbidden', message: expect.stringContaining(DSYNC_SCOPE) });
    }
    // A token with every other widget scope: 403 too.
    const others = await clientSetup(env, {
      organizationId: me.organizationId,
      scopes: ALL_WIDGET_SCOPES.filter((scope) => scope !== DSYNC_SCOPE),
    });
    expect((await others.http.get('/_widgets/directory-sync/directories')).status).toBe(403);
    // No token: 403 (the widgets recover only from a 403).
    const none = await fetch(`${env.world.url}/_widgets/directory-sync/directories`, { headers: WIDGET_HEADERS });
    expect(none.status).toBe(403);
    expect((await links(env)).length).toBe(before);
  });

  it('the generate-link route gives a dsync link to a token with the scope, and 403 without', async () => {
    const env = await newEnvironment();
    const me = await dsyncMember(env);
    const made = await me.http.post('/_widgets/admin-portal/generate-link?intent=dsync');
    expect(made.status).toBe(201);
    expect(made.body.link).toMatch(/\/portal\/launch\?apiToken=/);
    const others = await clientSetup(env, {
      organizationId: me.organizationId,
      scopes: ['widgets:users-table:manage'],
    });
    expect((await others.http.post('/_widgets/admin-portal/generate-link?intent=dsync')).status).toBe(403);
    expect((await links(env)).map((l) => l.intent)).toEqual(['dsync']);
  });
});
