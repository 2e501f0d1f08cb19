import { NotFoundException, UnprocessableEntityException } from '@workos-inc/node';
import { describe, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/people.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { newEnvironment } from '../helpers/world.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every required field of the SDK's `EnvironmentRole` / `OrganizationRole`, with its type. */
function expectRole(role: Record<string, unknown>, type: 'EnvironmentRole' | 'OrganizationRole') {
  expect(role).toEqual({
    object: 'role',
    id: expect.stringMatching(/^role_[0-9A-Z]{26}$/),
    name: expect.any(String),
    slug: expect.any(String),
    description: role.description === null ? null : expect.any(String),
    permissions: expect.any(Array),
    resourceTypeSlug: 'organization',
    type,
    createdAt: expect.stringMatching(ISO),
    updatedAt: expect.stringMatching(ISO),
  });
}

describe('the official SDK: authorization roles and permissions', () => {
  it('environment roles: starts with member and admin, creates, reads, updates and grants permissions', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);

    const start = await workos.authorization.listEnvironmentRoles();
    expect(start.object).toBe('list');
    expect(start.data.map((r) => r.slug)).toEqual(['member', 'admin']);
    for (const role of start.data) expectRole(role as never, 'EnvironmentRole');

    const read = await workos.authorization.createPermission({ slug: 'posts:read', name: 'Read posts' });
    expect(read).toEqual({
      object: 'permission',
      id: expect.stringMatching(/^perm_/),
      slug: 'posts:read',
      name: 'Read posts',
      description: null,
      resourceTypeSlug: 'organization',
      system: false,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const write = await workos.authorization.createPermission({
      slug: 'posts:write',
      name: 'Write posts',
      description: 'Create and edit posts',
    });
    expect(write.description).toBe('Create and edit posts');

    const editor = await workos.authorization.createEnvironmentRole({
      slug: 'editor',
      name: 'Editor',
      description: 'Edits things',
    });
    expectRole(editor as never, 'EnvironmentRole');
    expect(editor).toMatchObject({ slug: 'editor', name: 'Editor', description: 'Edits things', permissions: [] });

    expect(await workos.authorization.getEnvironmentRole('editor')).toEqual(editor);
    const renamed = await workos.authorization.updateEnvironmentRole('editor', { name: 'Writer', description: null });
    expect(renamed).toMatchObject({ slug: 'editor', name: 'Writer', description: null });

    const set = await workos.authorization.setEnvironmentRolePermissions('editor', {
      permissions: ['posts:write', 'posts:read'],
    });
    expect(set.permissions).toEqual(['posts:read', 'posts:write']);
    const cleared = await workos.authorization.setEnvironmentRolePermissions('editor', { permissions: [] });
    expect(cleared.permissions).toEqual([]);
    const added = await workos.authorization.addEnvironmentRolePermission('editor', { permissionSlug: 'posts:read' });
    expect(added.permissions).toEqual(['posts:read']);
    // Adding it again is a no-op.
    expect(
      (await workos.authorization.addEnvironmentRolePermission('editor', { permissionSlug: 'posts:read' })).permissions,
    ).toEqual(['posts:read']);

    expect((await workos.authorization.listEnvironmentRoles()).data.map((r) => r.slug)).toEqual([
      'member',
      'admin',
      'editor',
    ]);
    await expect(workos.authorization.getEnvironmentRole('nope')).rejects.toBeInstanceOf(NotFoundException);
    await expect(
      workos.authorization.addEnvironmentRolePermission('editor', { permissionSlug: 'posts:delete' }),
    ).rejects.toBeInstanceOf(UnprocessableEntityException);
  });

  it('permissions: create, get, list (paginated), update and delete', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    for (const slug of ['a:read', 'b:read', 'c:read']) {
      await workos.authorization.createPermission({ slug, name: slug.toUpperCase() });
    }
    const got = await workos.authorization.getPermission('b:read');
    expect(got).toMatchObject({ object: 'permission', slug: 'b:read', name: 'B:READ', system: false });

    // After the environment's eight system permissions (the widgets' scopes, granted to admin).
    const page = await workos.authorization.listPermissions({ limit: 10, order: 'asc' });
    expect(page.data.filter((p) => !p.system).map((p) => p.slug)).toEqual(['a:read', 'b:read']);
    expect(page.data).toHaveLength(10);
    expect(page.listMetadata.after).toBe(page.data[9]?.id);
    const all = await (await workos.authorization.listPermissions()).autoPagination();
    expect(
      all
        .filter((p) => !p.system)
        .map((p) => p.slug)
        .sort(),
    ).toEqual(['a:read', 'b:read', 'c:read']);
    expect(all.filter((p) => p.system)).toHaveLength(8);

    const updated = await workos.authorization.updatePermission('b:read', { name: 'Read B', description: 'B things' });
    expect(updated).toMatchObject({ slug: 'b:read', name: 'Read B', description: 'B things' });
    await workos.authorization.deletePermission('b:read');
    await expect(workos.authorization.getPermission('b:read')).rejects.toBeInstanceOf(NotFoundException);
  });

  it('organization roles: create (slug given or derived), list with the environment roles, shadow, update, permissions, delete', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    await workos.authorization.createPermission({ slug: 'billing:manage', name: 'Manage billing' });
    await workos.authorization.createPermission({ slug: 'billing:read', name: 'Read billing' });

    const billing = await workos.authorization.createOrganizationRole(org.id, {
      slug: 'org-billing-admin',
      name: 'Billing admin',
      description: 'Pays',
    });
    expectRole(billing as never, 'OrganizationRole');
    expect(billing).toMatchObject({ slug: 'org-billing-admin', name: 'Billing admin', description: 'Pays' });

    const derived = await workos.authorization.createOrganizationRole(org.id, { name: 'Support Lead' });
    expect(derived.slug).toBe('org-support-lead');

    // An organization role named like an environment role shadows it in that organization.
    const admin = await workos.authorization.createOrganizationRole(org.id, { slug: 'admin', name: 'Acme admin' });
    const list = await workos.authorization.listOrganizationRoles(org.id);
    expect(list.object).toBe('list');
    expect(list.data.map((r) => [r.slug, r.type])).toEqual([
      ['member', 'EnvironmentRole'],
      ['org-billing-admin', 'OrganizationRole'],
      ['org-support-lead', 'OrganizationRole'],
      ['admin', 'OrganizationRole'],
    ]);
    expect(await workos.authorization.getOrganizationRole(org.id, 'admin')).toMatchObject({
      id: admin.id,
      type: 'OrganizationRole',
      name: 'Acme admin',
    });
    expect(await workos.authorization.getOrganizationRole(org.id, 'member')).toMatchObject({
      slug: 'member',
      type: 'EnvironmentRole',
    });

    const updated = await workos.authorization.updateOrganizationRole(org.id, 'org-billing-admin', { name: 'Billing' });
    expect(updated).toMatchObject({
      slug: 'org-billing-admin',
      name: 'Billing',
      description: 'Pays',
      type: 'OrganizationRole',
    });

    const set = await workos.authorization.setOrganizationRolePermissions(org.id, 'org-billing-admin', {
      permissions: ['billing:read'],
    });
    expect(set.permissions).toEqual(['billing:read']);
    const added = await workos.authorization.addOrganizationRolePermission(org.id, 'org-billing-admin', {
      permissionSlug: 'billing:manage',
    });
    expect(added.permissions).toEqual(['billing:manage', 'billing:read']);
    await workos.authorization.removeOrganizationRolePermission(org.id, 'org-billing-admin', {
      permissionSlug: 'billing:read',
    });
    expect((await workos.authorization.getOrganizationRole(org.id, 'org-billing-admin')).permissions).toEqual([
      'billing:manage',
    ]);

    await workos.authorization.deleteOrganizationRole(org.id, 'org-support-lead');
    await expect(workos.authorization.getOrganizationRole(org.id, 'org-support-lead')).rejects.toBeInstanceOf(
      NotFoundException,
    );
    // Another organization sees none of these.
    const other = await workos.organizations.createOrganization({ name: 'Other' });
    expect((await workos.authorization.listOrganizationRoles(other.id)).data.map((r) => r.slug)).toEqual([
      'member',
      'admin',
    ]);
  });

  it('memberships: role and roles on every read and write; the slug sent is the slug returned', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    await workos.authorization.createOrganizationRole(org.id, { slug: 'org-auditor', name: 'Auditor' });
    const [ada, bob, cy] = await Promise.all(
      ['ada', 'bob', 'cy'].map((n) => workos.userManagement.createUser({ email: uniqueEmail(n) })),
    );

    const plain = await workos.userManagement.createOrganizationMembership({ userId: ada!.id, organizationId: org.id });
    expect(plain).toMatchObject({
      object: 'organization_membership',
      userId: ada!.id,
      organizationId: org.id,
      organizationName: 'Acme',
      status: 'active',
      directoryManaged: false,
      customAttributes: {},
      role: { slug: 'member' },
      roles: [{ slug: 'member' }],
    });

    const withSlug = await workos.userManagement.createOrganizationMembership({
      userId: bob!.id,
      organizationId: org.id,
      roleSlug: 'admin',
    });
    expect(withSlug.role).toEqual({ slug: 'admin' });
    expect(withSlug.roles).toEqual([{ slug: 'admin' }]);

    const withSlugs = await workos.userManagement.createOrganizationMembership({
      userId: cy!.id,
      organizationId: org.id,
      roleSlugs: ['org-auditor', 'admin'],
    });
    expect(withSlugs.role).toEqual({ slug: 'org-auditor' });
    expect(withSlugs.roles).toEqual([{ slug: 'org-auditor' }, { slug: 'admin' }]);

    const changed = await workos.userManagement.updateOrganizationMembership(plain.id, { roleSlug: 'org-auditor' });
    expect(changed).toMatchObject({ id: plain.id, role: { slug: 'org-auditor' }, roles: [{ slug: 'org-auditor' }] });
    const many = await workos.userManagement.updateOrganizationMembership(plain.id, { roleSlugs: ['admin', 'member'] });
    expect(many.roles).toEqual([{ slug: 'admin' }, { slug: 'member' }]);
    expect(await workos.userManagement.getOrganizationMembership(plain.id)).toMatchObject({
      role: { slug: 'admin' },
      roles: [{ slug: 'admin' }, { slug: 'member' }],
    });
    const listed = await workos.userManagement.listOrganizationMemberships({ organizationId: org.id });
    expect(listed.data.every((m) => typeof m.role?.slug === 'string')).toBe(true);

    await expect(
      workos.userManagement.updateOrganizationMembership(plain.id, { roleSlug: 'no-such-role' }),
    ).rejects.toBeInstanceOf(UnprocessableEntityException);
    expect((await workos.userManagement.getOrganizationMembership(plain.id)).role).toEqual({ slug: 'admin' });

    // Deactivate and reactivate keep the roles.
    expect((await workos.userManagement.deactivateOrganizationMembership(plain.id)).role).toEqual({ slug: 'admin' });
    expect((await workos.userManagement.reactivateOrganizationMembership(plain.id)).role).toEqual({ slug: 'admin' });
  });
});
