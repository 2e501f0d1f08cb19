import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { membershipRoles, migrationsFolder, roles } from '@atrium/db';
import { asc, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { failure, newMember, uniqueEmail } from '../helpers/people.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { newEnvironment } from '../helpers/world.ts';

const ROLE_ID = /^role_[0-9A-HJKMNP-TV-Z]{26}$/;

describe('roles (caller)', () => {
  it('a new environment starts with member (the default) and admin', async () => {
    const env = await newEnvironment();
    const list = await env.caller.roles.list({});
    expect(list.data.map((r) => [r.slug, r.name, r.type])).toEqual([
      ['member', 'Member', 'EnvironmentRole'],
      ['admin', 'Admin', 'EnvironmentRole'],
    ]);
    expect((await env.caller.roles.getDefault({})).slug).toBe('member');
  });

  it('the tRPC procedures take the same rules: unknown slug 422, role in use 409', async () => {
    const env = await newEnvironment();
    const { organizationId, membership } = await newMember(env);
    expect(membership.role).toEqual({ slug: 'member' });
    expect(await failure(env.caller.organizationMemberships.update({ id: membership.id, role_slug: 'x' }))).toEqual({
      status: 422,
      code: 'invalid_request_parameters',
    });
    await env.caller.roles.organization.create({ organization_id: organizationId, slug: 'org-x', name: 'X' });
    await env.caller.organizationMemberships.update({ id: membership.id, role_slug: 'org-x' });
    expect(
      await failure(env.caller.roles.organization.delete({ organization_id: organizationId, slug: 'org-x' })),
    ).toEqual({ status: 409, code: 'role_has_assignments' });
  });

  it('makes a slug of the name when none is sent, and asks for one when the name has no letters to make it of', async () => {
    const env = await newEnvironment();
    const { organizationId } = await newMember(env);
    const create = (name: string) => env.caller.roles.organization.create({ organization_id: organizationId, name });
    expect((await create('Équipe  Support!')).slug).toBe('org-equipe-support');
    expect(await failure(create('日本'))).toEqual({ status: 422, code: 'invalid_request_parameters' });
  });

  it('deleting an organization takes its roles and its memberships with their roles, in one statement', async () => {
    const env = await newEnvironment();
    const { organizationId, membership } = await newMember(env);
    await env.caller.roles.organization.create({ organization_id: organizationId, slug: 'org-y', name: 'Y' });
    await env.caller.organizationMemberships.update({ id: membership.id, role_slugs: ['org-y', 'admin'] });
    await env.caller.organizations.delete({ id: organizationId });
    const left = await env.deps.db.select().from(roles).where(eq(roles.environmentId, env.environmentId));
    expect(left.map((r) => r.slug).sort()).toEqual(['admin', 'member']);
    const links = await env.deps.db
      .select()
      .from(membershipRoles)
      .where(eq(membershipRoles.environmentId, env.environmentId));
    expect(links).toEqual([]);
  });

  it('the SDK reads the role and membership events as it declares them', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    await workos.authorization.createEnvironmentRole({ slug: 'auditor', name: 'Auditor' });
    await workos.authorization.createOrganizationRole(org.id, { slug: 'org-z', name: 'Z' });
    await workos.authorization.createPermission({ slug: 'z:read', name: 'Z' });
    const user = await workos.userManagement.createUser({ email: uniqueEmail('ev') });
    const m = await workos.userManagement.createOrganizationMembership({
      userId: user.id,
      organizationId: org.id,
      roleSlug: 'auditor',
    });
    await workos.userManagement.updateOrganizationMembership(m.id, { roleSlug: 'org-z' });
    const { data } = await workos.events.listEvents({
      events: [
        'role.created',
        'organization_role.created',
        'permission.created',
        'organization_membership.created',
        'organization_membership.updated',
      ],
    });
    const by = (name: string) => data.find((e) => e.event === name)?.data as unknown as Record<string, unknown>;
    expect(by('role.created')).toMatchObject({
      object: 'role',
      slug: 'auditor',
      resourceTypeSlug: 'organization',
      permissions: [],
    });
    expect(by('organization_role.created')).toMatchObject({
      object: 'organization_role',
      organizationId: org.id,
      slug: 'org-z',
      name: 'Z',
    });
    expect(by('permission.created')).toMatchObject({ object: 'permission', slug: 'z:read', system: false });
    expect(by('organization_membership.created')).toMatchObject({ id: m.id, role: { slug: 'auditor' } });
    expect(by('organization_membership.updated')).toMatchObject({ id: m.id, role: { slug: 'org-z' } });
  });
});

describe('the seed_default_roles migration', () => {
  it('gives an environment without roles member (default) and admin, and its memberships the default', async () => {
    const env = await newEnvironment();
    const { membership } = await newMember(env);
    // As before the migration: no roles, no membership roles.
    await env.deps.db.delete(membershipRoles).where(eq(membershipRoles.environmentId, env.environmentId));
    await env.deps.db.delete(roles).where(eq(roles.environmentId, env.environmentId));

    // The migration's own statements, scoped to this environment (other test files share the database).
    const file = readFileSync(join(migrationsFolder, '0011_seed_default_roles.sql'), 'utf8');
    const scoped = (from: string) => `(SELECT * FROM ${from} WHERE environment_id = '${env.environmentId}')`;
    const statements = file
      .replace('FROM "environments" e', `FROM (SELECT * FROM "environments" WHERE id = '${env.environmentId}') e`)
      .replace('FROM "organization_memberships" m', `FROM ${scoped('"organization_memberships"')} m`)
      .split('--> statement-breakpoint');
    expect(statements).toHaveLength(2);
    for (let run = 0; run < 2; run++) {
      // Twice: a second run adds nothing.
      for (const statement of statements) await env.deps.db.execute(sql.raw(statement));
    }

    const seeded = await env.deps.db
      .select()
      .from(roles)
      .where(eq(roles.environmentId, env.environmentId))
      .orderBy(asc(roles.id));
    expect(seeded.map((r) => [r.slug, r.isDefault, r.organizationId])).toEqual([
      ['member', true, null],
      ['admin', false, null],
    ]);
    for (const role of seeded) expect(role.id).toMatch(ROLE_ID);
    expect((await env.caller.organizationMemberships.get({ id: membership.id })).roles).toEqual([{ slug: 'member' }]);
    const links = await env.deps.db
      .select()
      .from(membershipRoles)
      .where(eq(membershipRoles.organizationMembershipId, membership.id));
    expect(links).toEqual([
      { environmentId: env.environmentId, organizationMembershipId: membership.id, roleId: seeded[0]?.id, position: 0 },
    ]);
    // The roles work as any: a membership can be given admin.
    expect((await env.caller.organizationMemberships.update({ id: membership.id, role_slug: 'admin' })).role).toEqual({
      slug: 'admin',
    });
  });
});
