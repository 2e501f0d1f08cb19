import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ensureAdminToken } from '@atrium/routers';
import { runCli } from '@atrium/server';
import { beforeAll, describe, expect, it } from 'vitest';
import { getWorld, HttpClient } from './helpers/world.ts';

const ADMIN_TOKEN = `atrium_admin_${'T'.repeat(20)}${process.pid.toString().padStart(20, '0')}`;

async function cli(args: string[], token: string | null = ADMIN_TOKEN) {
  const world = await getWorld();
  let out = '';
  let err = '';
  const code = await runCli(args, {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
    env: { ATRIUM_URL: world.url, ...(token ? { ATRIUM_ADMIN_TOKEN: token } : {}) },
  });
  return { code, out, err };
}

beforeAll(async () => {
  const world = await getWorld();
  await ensureAdminToken(world.deps, ADMIN_TOKEN);
});

describe('admin CLI', () => {
  it('creates an environment whose key works at once, and lists it', async () => {
    const created = await cli(['environments', 'create', '--name', 'cli-env', '--json']);
    expect(created.code).toBe(0);
    const body = JSON.parse(created.out);
    expect(Object.keys(body).sort()).toEqual(['api_key', 'client_id', 'environment_id']);
    expect(body.environment_id).toMatch(/^env_/);
    expect(body.client_id).toMatch(/^client_/);
    expect(body.api_key).toMatch(/^sk_test_[0-9A-Za-z]{40}$/);
    const world = await getWorld();
    const http = new HttpClient(world.url, { Authorization: `Bearer ${body.api_key}` });
    expect((await http.get('/organizations')).status).toBe(200);

    const listed = await cli(['environments', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(body.environment_id);
    expect(listed.out).toContain('cli-env');
  });

  it('creates and revokes API keys; a revoked key is refused at once', async () => {
    const env = JSON.parse((await cli(['environments', 'create', '--name', 'cli-keys', '--json'])).out);
    const world = await getWorld();
    const second = JSON.parse((await cli(['api-keys', 'create', '--environment', env.environment_id, '--json'])).out);
    expect(Object.keys(second)).toEqual(['api_key']);
    const http = new HttpClient(world.url, { Authorization: `Bearer ${second.api_key}` });
    expect((await http.get('/organizations')).status).toBe(200); // now cached
    const revoked = await cli([
      'api-keys',
      'revoke',
      '--environment',
      env.environment_id,
      '--key-prefix',
      second.api_key.slice(0, 16),
    ]);
    expect(revoked.code).toBe(0);
    expect((await http.get('/organizations')).status).toBe(401);
    // The first key of the environment still works.
    const first = new HttpClient(world.url, { Authorization: `Bearer ${env.api_key}` });
    expect((await first.get('/organizations')).status).toBe(200);
    const missing = await cli([
      'api-keys',
      'revoke',
      '--environment',
      env.environment_id,
      '--key-prefix',
      'sk_test_nomatch',
    ]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('entity_not_found');
  });

  it('turns feature flags on and off', async () => {
    const env = JSON.parse((await cli(['environments', 'create', '--name', 'cli-flags', '--json'])).out);
    const off = await cli(['flags', 'set', '--environment', env.environment_id, '--flag', 'groups', '--off', '--json']);
    expect(JSON.parse(off.out).flags).toEqual({ groups: false, agents: true });
    const on = await cli(['flags', 'set', '--environment', 'cli-flags', '--flag', 'groups', '--on']);
    expect(on.code).toBe(0);
    expect(on.out).toContain('"groups":true');
    const both = await cli(['flags', 'set', '--environment', env.environment_id, '--flag', 'groups']);
    expect(both.code).not.toBe(0);
  });

  it('refuses a missing or wrong admin token', async () => {
    expect((await cli(['environments', 'list'], null)).err).toContain('unauthorized');
    const wrong = await cli(['environments', 'list'], `atrium_admin_${'x'.repeat(40)}`);
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain('unauthorized');
  });

  it('is installed as `npx atrium`', async () => {
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'atrium', '--help'], {
      env: { ...process.env, ATRIUM_URL: 'http://127.0.0.1:1' },
    });
    expect(stdout).toContain('environments');
    expect(stdout).toContain('api-keys');
  });
});
