import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli } from '../helpers/cli.ts';
import { adminTokenOf } from '../helpers/tokens.ts';
import { getWorld, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

async function cli(...argv: string[]) {
  const world = await getWorld();
  return runAdminCli(argv, { ATRIUM_URL: world.url, ATRIUM_ADMIN_TOKEN: await adminTokenOf() });
}

/** What the environment holds, read back through the REST API with its own key. */
async function stored(env: TestEnvironment) {
  const organizations = (await env.http.get('/organizations?limit=100')).body.data as any[];
  const users = (await env.http.get('/user_management/users?limit=100')).body.data as any[];
  const memberships = (await env.http.get('/user_management/organization_memberships?limit=100')).body.data as any[];
  return { organizations, users, memberships };
}

// Start the shared server (PGlite boot and migrations) in a hook, so no test's own timeout pays for it.
beforeAll(async () => {
  await getWorld();
  await adminTokenOf();
});

describe('atrium seed', () => {
  it('makes organizations with domains (one pending), users and memberships with roles, in that environment only', async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const run = await cli('seed', '--environment', env.environmentId, '--json');
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.out);
    expect(report.organizations.every((o: { created: boolean }) => o.created)).toBe(true);

    const { organizations, users, memberships } = await stored(env);
    const byName = Object.fromEntries(organizations.map((org) => [org.name, org]));
    expect(Object.keys(byName).sort()).toEqual(['Acme Corp', 'Globex', 'Initech']);
    expect(byName['Acme Corp'].external_id).toBe('demo-acme');
    expect(byName['Acme Corp'].domains).toEqual([
      expect.objectContaining({ domain: 'acme.example.org', state: 'verified' }),
    ]);
    expect(byName.Globex.domains).toEqual([
      expect.objectContaining({ domain: 'globex.example.org', state: 'verified' }),
    ]);
    const [pending] = byName.Initech.domains;
    expect(pending).toMatchObject({ domain: 'initech.example.org', state: 'pending' });
    // A real pending domain of the state machine: it has its TXT record to publish.
    const domain = await env.http.get(`/organization_domains/${pending.id}`);
    expect(domain.status).toBe(200);
    expect(domain.body).toMatchObject({ state: 'pending', verification_strategy: 'dns' });
    expect(domain.body.verification_token).toEqual(expect.any(String));

    expect(users.map((u) => u.email).sort()).toEqual([
      'alice@acme.example.org',
      'bob@acme.example.org',
      'carol@globex.example.org',
      'dan@initech.example.org',
    ]);
    const emailOf = Object.fromEntries(users.map((u) => [u.id, u.email]));
    const nameOf = Object.fromEntries(organizations.map((o) => [o.id, o.name]));
    const roles = memberships.map((m) => `${emailOf[m.user_id]} ${nameOf[m.organization_id]} ${m.role.slug}`).sort();
    expect(roles).toEqual([
      'alice@acme.example.org Acme Corp admin',
      'bob@acme.example.org Acme Corp member',
      'carol@globex.example.org Acme Corp member',
      'carol@globex.example.org Globex admin',
      'dan@initech.example.org Initech admin',
    ]);
    expect(memberships.every((m) => m.status === 'active')).toBe(true);

    // Scoped to the environment it was given.
    expect(await stored(other)).toEqual({ organizations: [], users: [], memberships: [] });
  });

  it('adds nothing on a second run, and says so', async () => {
    const env = await newEnvironment();
    const first = await cli('seed', '--environment', env.environmentId);
    expect(first.code).toBe(0);
    expect(first.out).toContain('initech.example.org (pending)');
    expect(first.out).toContain('admin of Acme Corp');
    const before = await stored(env);

    const second = await cli('seed', '--environment', env.environmentId, '--json');
    expect(second.code).toBe(0);
    const report = JSON.parse(second.out);
    for (const item of [...report.organizations, ...report.users, ...report.memberships]) {
      expect(item.created).toBe(false);
    }
    expect(report.organizations.map((o: { id: string }) => o.id).sort()).toEqual(
      before.organizations.map((o) => o.id).sort(),
    );
    expect(await stored(env)).toEqual(before);
    expect((await cli('seed', '--environment', env.environmentId)).out).toContain('Nothing to add');
  });

  it('refuses an unknown environment or none, storing nothing', async () => {
    const unknown = await cli('seed', '--environment', 'env_does_not_exist');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/not found|No environment/i);
    const missing = await cli('seed');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("required option '--environment <env>'");
  });
});

describe('atrium --version', () => {
  const version = JSON.parse(readFileSync(new URL('../../../server/package.json', import.meta.url), 'utf8')).version;

  it('prints the package version', async () => {
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect(await cli('--version')).toMatchObject({ code: 0, out: `${version}\n`, err: '' });
  });

  it('does so as `npx atrium --version`', async () => {
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'atrium', '--version'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    expect(stdout).toBe(`${version}\n`);
  });
});
