import { redirectUris } from '@atrium/db';
import { ensureAdminToken } from '@atrium/routers';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli } from '../helpers/cli.ts';
import { getWorld, newEnvironment } from '../helpers/world.ts';

// `npx atrium redirect-uris add|list|set-default|remove` against the worker's server.

const ADMIN_TOKEN = `atrium_admin_${'R'.repeat(20)}${process.pid.toString().padStart(20, '0')}`;

async function cli(args: string[]) {
  const world = await getWorld();
  return runAdminCli(args, { ATRIUM_URL: world.url, ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN });
}

beforeAll(async () => {
  const world = await getWorld();
  await ensureAdminToken(world.deps, ADMIN_TOKEN);
}, 120_000);

describe('npx atrium redirect-uris', () => {
  it('adds, lists, switches the default and removes', async () => {
    const env = await newEnvironment();
    const e = env.environmentId;
    const added = await cli([
      'redirect-uris',
      'add',
      '--environment',
      e,
      '--uri',
      'https://app.example.com/cb',
      '--default',
      '--json',
    ]);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.out)).toMatchObject({
      object: 'redirect_uri',
      uri: 'https://app.example.com/cb',
      default: true,
    });
    expect((await cli(['redirect-uris', 'add', '--environment', e, '--uri', 'http://localhost:3000/cb'])).code).toBe(0);

    const listed = await cli(['redirect-uris', 'list', '--environment', e, '--json']);
    expect(JSON.parse(listed.out).map((u: { uri: string; default: boolean }) => [u.uri, u.default])).toEqual([
      // Newest first, as every list.
      ['http://localhost:3000/cb', false],
      ['https://app.example.com/cb', true],
    ]);

    expect(
      (await cli(['redirect-uris', 'set-default', '--environment', e, '--uri', 'http://localhost:3000/cb'])).code,
    ).toBe(0);
    const rows = await env.deps.db.select().from(redirectUris).where(eq(redirectUris.environmentId, e));
    expect(rows.filter((r) => r.isDefault).map((r) => r.uri)).toEqual(['http://localhost:3000/cb']);

    const removed = await cli(['redirect-uris', 'remove', '--environment', e, '--uri', 'https://app.example.com/cb']);
    expect(removed.code).toBe(0);
    expect(await env.deps.db.select().from(redirectUris).where(eq(redirectUris.environmentId, e))).toHaveLength(1);
  });

  it('refuses an invalid URI with the reason, and an unknown one on remove', async () => {
    const env = await newEnvironment();
    const bad = await cli([
      'redirect-uris',
      'add',
      '--environment',
      env.environmentId,
      '--uri',
      'http://app.example.com/cb',
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('https');
    const missing = await cli([
      'redirect-uris',
      'remove',
      '--environment',
      env.environmentId,
      '--uri',
      'https://nope.example.com/',
    ]);
    expect(missing.code).not.toBe(0);
    expect(missing.err).toMatch(/not found/i);
    expect(
      await env.deps.db.select().from(redirectUris).where(eq(redirectUris.environmentId, env.environmentId)),
    ).toHaveLength(0);
  });
});
