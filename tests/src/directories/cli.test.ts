import { createHash } from 'node:crypto';
import { directories, directoryGroups } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli } from '../helpers/cli.ts';
import { storedEvents } from '../helpers/events.ts';
import { adminTokenOf, makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { pushGroup, pushUser, warmUp } from './directory-data.ts';

// `npx atrium directories …`, in-process against the worker's server: create (the token shown
// once), rotate-token, list, groups, map-group and delete, and their refusals.

beforeAll(warmUp);

async function cli(env: TestEnvironment, ...argv: string[]) {
  return runAdminCli(argv, { ATRIUM_URL: env.world.url, ATRIUM_ADMIN_TOKEN: await adminTokenOf() });
}

const stored = async (env: TestEnvironment) =>
  env.deps.db.select().from(directories).where(eq(directories.environmentId, env.environmentId));

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function create(env: TestEnvironment, organizationId: string, ...extra: string[]) {
  return cli(
    env,
    'directories',
    'create',
    '--environment',
    env.environmentId,
    '--organization',
    organizationId,
    '--type',
    'okta scim v2.0',
    '--name',
    'Acme Okta',
    ...extra,
    '--json',
  );
}

describe('atrium directories', () => {
  it('create --json prints the directory, its SCIM base URL and bearer token (stored only as a hash)', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const created = await create(env, organizationId, '--domain', 'acme.example.com');
    expect(created.code).toBe(0);
    expect(created.err).toBe('');
    const body = created.json();
    expect(body).toMatchObject({
      object: 'directory',
      id: expect.stringMatching(/^directory_[0-9A-Z]{26}$/),
      organization_id: organizationId,
      type: 'okta scim v2.0',
      state: 'unlinked',
      name: 'Acme Okta',
      domain: 'acme.example.com',
      bearer_token: expect.stringMatching(/^scim_[0-9A-Za-z]{40}$/),
    });
    expect(body.scim_base_url).toBe(`http://127.0.0.1/scim/v2/${body.id}`);
    const [row] = await stored(env);
    expect(row?.tokenHash).toBe(sha256(body.bearer_token));
    expect(JSON.stringify(row)).not.toContain(body.bearer_token);
    // Recorded for the console's event stream, with the actor admin and without the token.
    const [event] = (await storedEvents(env)).filter((e) => e.event === 'directory.created');
    expect(event).toMatchObject({ actor: 'admin', data: { id: body.id, organization_id: organizationId } });
    expect(JSON.stringify(event)).not.toContain(body.bearer_token);

    // Without --json: key/value lines, the token among them.
    const human = await cli(
      env,
      'directories',
      'create',
      '--environment',
      env.environmentId,
      '--organization',
      organizationId,
      '--type',
      'generic scim v2.0',
      '--name',
      'Generic',
    );
    expect(human.code).toBe(0);
    expect(human.out).toMatch(/^bearer_token\s+scim_/m);
    expect(human.out).toMatch(/^scim_base_url\s+http:\/\/127\.0\.0\.1\/scim\/v2\/directory_/m);
  });

  it('rotate-token prints a new token and replaces the stored hash; list shows no token', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const first = (await create(env, organizationId)).json();
    const rotated = await cli(env, 'directories', 'rotate-token', first.id, '--json');
    expect(rotated.code).toBe(0);
    const body = rotated.json();
    expect(body).toMatchObject({ id: first.id, scim_base_url: first.scim_base_url });
    expect(body.bearer_token).toMatch(/^scim_[0-9A-Za-z]{40}$/);
    expect(body.bearer_token).not.toBe(first.bearer_token);
    const [row] = await stored(env);
    expect(row?.tokenHash).toBe(sha256(body.bearer_token));

    const listed = await cli(env, 'directories', 'list', '--environment', env.environmentId, '--json');
    expect(listed.code).toBe(0);
    expect(listed.json().map((d: { id: string }) => d.id)).toEqual([first.id]);
    expect(listed.out).not.toContain('scim_');
    const other = await makeOrganization(env, 'Globex');
    const none = await cli(env, 'directories', 'list', '--environment', env.environmentId, '--organization', other);
    expect(none.out).toBe('(none)\n');
  });

  it('deactivate unlinks a linked directory once (dsync.deactivated), refuses its token, and rotate-token gives a working one', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const directory = (await create(env, organizationId)).json();
    await pushUser(env, directory.id, { userName: 'ada@example.com' });
    const scim = (token: string) =>
      fetch(`${directory.scim_base_url.replace('http://127.0.0.1', env.world.url)}/Users`, {
        headers: { Authorization: `Bearer ${token}` },
      });
    expect((await scim(directory.bearer_token)).status).toBe(200);

    const deactivated = await cli(env, 'directories', 'deactivate', directory.id, '--json');
    expect(deactivated.code).toBe(0);
    expect(deactivated.json()).toMatchObject({ id: directory.id, state: 'unlinked' });
    expect(deactivated.out).not.toContain('scim_');
    expect((await scim(directory.bearer_token)).status).toBe(401);
    // Again: nothing changes, no second event.
    expect((await cli(env, 'directories', 'deactivate', directory.id, '--json')).json().state).toBe('unlinked');
    const events = await env.http.get('/events?events=dsync.deactivated');
    expect(events.body.data.map((e: { data: { id: string } }) => e.data.id)).toEqual([directory.id]);

    const rotated = (await cli(env, 'directories', 'rotate-token', directory.id, '--json')).json();
    expect((await scim(rotated.bearer_token)).status).toBe(200);
    expect((await cli(env, 'directories', 'deactivate', 'directory_01HZZZZZZZZZZZZZZZZZZZZZZZ')).code).not.toBe(0);
  });

  it('groups and map-group: maps a group to a role, shows it, and removes the mapping', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const directory = (await create(env, organizationId)).json();
    const ada = await pushUser(env, directory.id, { userName: 'ada@example.com' });
    const admins = await pushGroup(env, directory.id, 'Admins', [ada.id]);

    const mapped = await cli(env, 'directories', 'map-group', admins.id, '--role', 'admin', '--json');
    expect(mapped.code).toBe(0);
    expect(mapped.json()).toMatchObject({ object: 'directory_group', id: admins.id, role_slug: 'admin' });
    const roleIdOf = async () =>
      (await env.deps.db.select().from(directoryGroups).where(eq(directoryGroups.id, admins.id)))[0]?.roleId;
    expect(await roleIdOf()).toMatch(/^role_/);
    const groups = await cli(env, 'directories', 'groups', directory.id, '--json');
    expect(groups.json()).toEqual([expect.objectContaining({ id: admins.id, name: 'Admins', role_slug: 'admin' })]);

    // An unknown role is refused, and the mapping stays.
    const unknown = await cli(env, 'directories', 'map-group', admins.id, '--role', 'superuser');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toBe(
      "error: Validation failed. (invalid_request_parameters)\n  role_slug: Role 'superuser' does not exist for this organization.\n",
    );
    expect(await roleIdOf()).toMatch(/^role_/);

    const cleared = await cli(env, 'directories', 'map-group', admins.id, '--none', '--json');
    expect(cleared.json().role_slug).toBeNull();
    expect(await roleIdOf()).toBeNull();

    // Exactly one of --role or --none.
    for (const args of [[], ['--role', 'admin', '--none']]) {
      const bad = await cli(env, 'directories', 'map-group', admins.id, ...args);
      expect(bad.code).toBe(2);
      expect(bad.err).toBe('error: Pass exactly one of --role <slug> or --none.\n');
    }
  });

  it('delete removes the directory (dsync.deleted); unknown ids and bad input are refused, storing nothing', async () => {
    const env = await newEnvironment();
    const organizationId = await makeOrganization(env);
    const directory = (await create(env, organizationId)).json();
    const deleted = await cli(env, 'directories', 'delete', directory.id, '--json');
    expect(deleted.code).toBe(0);
    expect(deleted.json()).toMatchObject({ id: directory.id, state: 'deleting' });
    expect(await stored(env)).toEqual([]);
    expect((await storedEvents(env)).map((e) => e.event)).toContain('dsync.deleted');

    for (const verb of ['delete', 'rotate-token', 'groups']) {
      const again = await cli(env, 'directories', verb, directory.id);
      expect(again.code, verb).toBe(1);
      expect(again.err).toBe(`error: Directory not found: '${directory.id}'. (entity_not_found)\n`);
    }
    const badType = await cli(
      env,
      'directories',
      'create',
      '--environment',
      env.environmentId,
      '--organization',
      organizationId,
      '--type',
      'OktaSAML',
      '--name',
      'x',
    );
    expect(badType.code).toBe(1);
    expect(badType.err).toMatch(/^error: Validation failed\. \(invalid_request_parameters\)\n {2}type: /);
    const noOrg = await create(env, 'org_01NOPE');
    expect(noOrg.code).toBe(1);
    expect(noOrg.err).toContain('entity_not_found');
    const missing = await cli(env, 'directories', 'create', '--environment', env.environmentId, '--name', 'x');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("required option '--organization <id>' not specified");
    expect(await stored(env)).toEqual([]);
  });

  it("cannot reach another environment's directory through --environment, and needs the admin token", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const foreignOrganization = await makeOrganization(other);
    const refused = await create(env, foreignOrganization);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('entity_not_found');
    expect(await stored(env)).toEqual([]);
    expect(await stored(other)).toEqual([]);

    const noToken = await runAdminCli(['directories', 'list', '--environment', env.environmentId], {
      ATRIUM_URL: env.world.url,
    });
    expect(noToken.code).toBe(1);
    expect(noToken.err).toContain('ATRIUM_ADMIN_TOKEN is not set');
    const badToken = await runAdminCli(['directories', 'list', '--environment', env.environmentId], {
      ATRIUM_URL: env.world.url,
      ATRIUM_ADMIN_TOKEN: 'atrium_admin_wrong',
    });
    expect(badToken.code).toBe(1);
    expect(badToken.err).toContain('(unauthorized)');
  });
});
