import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { migrationsFolder, permissions } from '@atrium/db';
import { authenticateClientToken, type ClientScope, requirePermission } from '@atrium/routers';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { ALL_WIDGET_SCOPES, clientSetup } from '../helpers/client.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

const SYSTEM = [
  'widgets:api-keys:manage',
  'widgets:audit-log-streaming:manage',
  'widgets:domain-verification:manage',
  'widgets:dsync:manage',
  'widgets:sso:manage',
  'widgets:user-api-keys:manage-all',
  'widgets:user-api-keys:manage-self',
  'widgets:users-table:manage',
];

/** The verified principal of a token, as every client surface sees it, and a scope for the services. */
async function scopeOf(env: TestEnvironment, token: string): Promise<ClientScope> {
  const { env: info, principal } = await authenticateClientToken(env.deps, `Bearer ${token}`);
  return { db: env.deps.db, env: info, now: env.deps.now, deps: env.deps, client: principal };
}

describe('client tokens get their role’s permissions', () => {
  it('a new environment holds the widgets’ system permissions, all granted to admin and none to member', async () => {
    const env = await newEnvironment();
    const list = await env.http.get('/authorization/permissions?limit=100');
    expect(list.status).toBe(200);
    const system = list.body.data.filter((p: { system: boolean }) => p.system);
    expect(system.map((p: { slug: string }) => p.slug).sort()).toEqual(SYSTEM);
    const admin = await env.caller.roles.get({ slug: 'admin' });
    expect([...admin.permissions].sort()).toEqual(SYSTEM);
    expect((await env.caller.roles.get({ slug: 'member' })).permissions).toEqual([]);
  });

  it('a system permission cannot be changed or deleted (409 system_permission, nothing stored); a role may drop it', async () => {
    const env = await newEnvironment();
    const slug = SYSTEM[0] as string;
    const before = (await env.http.get(`/authorization/permissions/${slug}`)).body;
    const renamed = await env.http.request('PATCH', `/authorization/permissions/${slug}`, {
      body: { name: 'Mine now' },
    });
    expect(renamed.status).toBe(409);
    expect(renamed.body).toMatchObject({ code: 'system_permission' });
    const deleted = await env.http.request('DELETE', `/authorization/permissions/${slug}`);
    expect(deleted.status).toBe(409);
    expect((await env.http.get(`/authorization/permissions/${slug}`)).body).toEqual(before);
    expect([...(await env.caller.roles.get({ slug: 'admin' })).permissions].sort()).toEqual(SYSTEM);
    await env.caller.roles.setPermissions({ role_slug: 'admin', permissions: SYSTEM.filter((p) => p !== slug) });
    expect((await env.caller.roles.get({ slug: 'admin' })).permissions).not.toContain(slug);
  });

  it('an operation-20 token of an admin passes the checks a widget token with the scopes passes; a member’s does not', async () => {
    const env = await newEnvironment();
    const widget = await clientSetup(env, { scopes: ALL_WIDGET_SCOPES });
    const admin = await clientSetup(env, { kind: 'client', roleSlug: 'admin', organizationId: widget.organizationId });
    const member = await clientSetup(env, { kind: 'client', organizationId: widget.organizationId });
    // The widget token asked for the helper's four scopes; the admin's role holds every system permission.
    for (const [token, held] of [
      [widget.token, ALL_WIDGET_SCOPES],
      [admin.token, SYSTEM],
    ] as const) {
      const scope = await scopeOf(env, token);
      for (const permission of held) expect(() => requirePermission(scope, permission)).not.toThrow();
    }
    const memberScope = await scopeOf(env, member.token);
    expect(memberScope.client.permissions).toEqual([]);
    for (const permission of SYSTEM) {
      expect(() => requirePermission(memberScope, permission)).toThrow(expect.objectContaining({ status: 403 }));
    }
    // The grant is read at each request: taking the permission from admin takes it from the token at once.
    await env.caller.roles.setPermissions({ role_slug: 'admin', permissions: ['widgets:sso:manage'] });
    expect((await scopeOf(env, admin.token)).client.permissions).toEqual(['widgets:sso:manage']);
  });
});

describe('the migrations that seed the system permissions (0016, 0023, 0031, 0034)', () => {
  it('give an existing environment the system permissions and its admin role all of them, once', async () => {
    const env = await newEnvironment();
    // As before the migrations: no system permissions (their role links go with them).
    await env.deps.db
      .delete(permissions)
      .where(and(eq(permissions.environmentId, env.environmentId), eq(permissions.system, true)));
    expect((await env.caller.roles.get({ slug: 'admin' })).permissions).toEqual([]);

    for (const name of [
      '0016_seed_widget_permissions.sql',
      '0023_seed_dsync_permission.sql',
      '0031_seed_audit_log_streaming_permission.sql',
      '0034_audit_log_exports_purge_api_key_scopes.sql',
    ]) {
      const file = readFileSync(join(migrationsFolder, name), 'utf8');
      // The seeds only (0034 also makes an index), limited to this environment.
      const statements = file
        .replace('FROM "environments" e', `FROM (SELECT * FROM "environments" WHERE id = '${env.environmentId}') e`)
        .replace('FROM "roles" r', `FROM (SELECT * FROM "roles" WHERE environment_id = '${env.environmentId}') r`)
        .split('--> statement-breakpoint')
        .filter((statement) => statement.includes('INSERT INTO'));
      expect(statements).toHaveLength(2);
      for (let run = 0; run < 2; run++) {
        for (const statement of statements) await env.deps.db.execute(sql.raw(statement));
      }
    }
    const seeded = await env.deps.db.select().from(permissions).where(eq(permissions.environmentId, env.environmentId));
    expect(seeded.map((p) => [p.slug, p.system]).sort()).toEqual(SYSTEM.map((slug) => [slug, true]));
    for (const p of seeded) expect(p.id).toMatch(/^perm_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect([...(await env.caller.roles.get({ slug: 'admin' })).permissions].sort()).toEqual(SYSTEM);
    expect((await env.caller.roles.get({ slug: 'member' })).permissions).toEqual([]);
  });

  it('0034 keeps an API-key scope the environment made by hand as it is, and grants all three to admin', async () => {
    const env = await newEnvironment();
    const keyScopes = SYSTEM.filter((slug) => slug.includes('api-keys'));
    // As before 0034: no such system permissions, and one made by hand, as an app had to.
    await env.deps.db
      .delete(permissions)
      .where(and(eq(permissions.environmentId, env.environmentId), inArray(permissions.slug, keyScopes)));
    const made = await env.http.post('/authorization/permissions', { slug: 'widgets:api-keys:manage', name: 'Mine' });
    expect(made.status).toBe(201);
    const file = readFileSync(join(migrationsFolder, '0034_audit_log_exports_purge_api_key_scopes.sql'), 'utf8');
    const statements = file
      .replace('FROM "environments" e', `FROM (SELECT * FROM "environments" WHERE id = '${env.environmentId}') e`)
      .replace('FROM "roles" r', `FROM (SELECT * FROM "roles" WHERE environment_id = '${env.environmentId}') r`)
      .split('--> statement-breakpoint')
      .filter((statement) => statement.includes('INSERT INTO'));
    for (const statement of statements) await env.deps.db.execute(sql.raw(statement));
    const seeded = await env.deps.db
      .select()
      .from(permissions)
      .where(and(eq(permissions.environmentId, env.environmentId), inArray(permissions.slug, keyScopes)));
    expect(seeded.map((p) => [p.slug, p.name, p.system]).sort()).toEqual([
      ['widgets:api-keys:manage', 'Mine', false],
      ['widgets:user-api-keys:manage-all', "Manage all members' API keys (widgets)", true],
      ['widgets:user-api-keys:manage-self', 'Manage own API keys (widgets)', true],
    ]);
    expect(seeded.find((p) => p.system === false)?.id).toBe(made.body.id);
    expect([...(await env.caller.roles.get({ slug: 'admin' })).permissions].sort()).toEqual(SYSTEM);
  });
});
