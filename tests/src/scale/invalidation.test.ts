import type { Listener } from '@atrium/db';
import {
  apiKeyCache,
  applyInvalidation,
  authenticateApiKey,
  authenticateDirectoryToken,
  type Deps,
  ensureAdminToken,
  INVALIDATION_CHANNEL,
  invalidationDown,
  invalidationUp,
  jwksOfClient,
  newCaches,
  rotateDirectoryToken,
  scopeOf,
  signingKeyCache,
} from '@atrium/routers';
import { createAdminClient } from '@atrium/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getWorld, newEnvironment, type World } from '../helpers/world.ts';
import { adminTokenFor } from '../reliability/own-app.ts';
import { newDirectory } from '../scim/helpers.ts';

/**
 * Invalidation on both drivers, in one test process: `listening` stands for a second process
 * (caches of its own, hearing the channel through the handle's LISTEN: PostgreSQL's, or PGlite's
 * own notifications); the changes are made through the worker's server, another set of caches.
 * The time bound is 0, so only a notification (or a fallback) can explain what is seen.
 */
async function within(ms: number, check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('cache invalidation over LISTEN/NOTIFY', () => {
  let world: World;
  let listening: Deps;
  let listener: Listener;
  const token = adminTokenFor('invalidation');

  beforeAll(async () => {
    world = await getWorld();
    await ensureAdminToken(world.deps, token);
    listening = {
      ...world.deps,
      config: { ...world.deps.config, apiKeyCacheTtlMs: 0 },
      tokens: { ...world.deps.tokens, keyCacheTtlMs: 0 },
      caches: newCaches(),
    };
    listener = await world.handle.listen(INVALIDATION_CHANNEL, {
      message: (payload) => applyInvalidation(listening, payload),
      up: () => invalidationUp(listening),
      down: () => invalidationDown(listening),
    });
    await within(5_000, () => listening.caches.invalidation.listening, 'listening');
  });
  afterAll(() => listener.close());

  const admin = () => createAdminClient(world.url, token);

  it('keeps a live key while it listens, and drops it when another process revokes it', async () => {
    const env = await newEnvironment();
    const { api_key: key } = await admin().apiKeys.create.mutate({ environment: env.environmentId, live: false });
    const first = await authenticateApiKey(listening, `Bearer ${key}`);
    // Time bound 0, yet the entry is served from memory: no notification has named it.
    expect(await authenticateApiKey(listening, `Bearer ${key}`)).toBe(first);
    await admin().apiKeys.revoke.mutate({ environment: env.environmentId, key_prefix: key.slice(0, 16) });
    await within(
      1_000,
      () =>
        !apiKeyCache(listening)
          .values()
          .some((e) => e.env.id === env.environmentId),
      'dropped',
    );
    await expect(authenticateApiKey(listening, `Bearer ${key}`)).rejects.toMatchObject({ status: 401 });
  });

  it('drops the keys of an environment whose flags change, so the new flags are read', async () => {
    const env = await newEnvironment();
    expect((await authenticateApiKey(listening, `Bearer ${env.apiKey}`)).flags.groups).toBe(true);
    await admin().flags.set.mutate({ environment: env.environmentId, flag: 'groups', enabled: false });
    await within(
      1_000,
      () =>
        !apiKeyCache(listening)
          .values()
          .some((e) => e.env.id === env.environmentId),
      'dropped',
    );
    expect((await authenticateApiKey(listening, `Bearer ${env.apiKey}`)).flags.groups).toBe(false);
  });

  it('drops an environment’s signing keys when another process rotates them', async () => {
    const env = await newEnvironment();
    const before = await jwksOfClient(listening, env.clientId);
    expect(await jwksOfClient(listening, env.clientId)).toBe(before);
    const rotated = await admin().signingKeys.rotate.mutate({ environment: env.environmentId });
    await within(1_000, () => !signingKeyCache(listening).has(env.environmentId), 'dropped');
    const after = await jwksOfClient(listening, env.clientId);
    expect(after.body.keys.map((k) => k.kid)).toContain(rotated.kid);
  });

  it('falls back to the time bounds while the channel is down, and forgets everything when it is back', async () => {
    const env = await newEnvironment();
    const first = await authenticateApiKey(listening, `Bearer ${env.apiKey}`);
    invalidationDown(listening);
    try {
      // Down, with a time bound of 0: every call reads the key again.
      expect(await authenticateApiKey(listening, `Bearer ${env.apiKey}`)).not.toBe(first);
    } finally {
      invalidationUp(listening);
    }
    expect(apiKeyCache(listening).size).toBe(0);
    expect(signingKeyCache(listening).size).toBe(0);
  });

  it('drops a SCIM token another process rotates, before its time bound', async () => {
    const d = await newDirectory();
    // A process that would keep the token a minute (auth/directory-token.ts) without the notification.
    const keeping = { ...listening, config: { ...listening.config, apiKeyCacheTtlMs: 60_000 } };
    const header = `Bearer ${d.token}`;
    expect((await authenticateDirectoryToken(keeping, header, d.directoryId)).principal.directoryId).toBe(
      d.directoryId,
    );
    await rotateDirectoryToken(await scopeOf(world.deps, d.env.environmentId), d.directoryId);
    await within(
      5_000,
      () =>
        authenticateDirectoryToken(keeping, header, d.directoryId).then(
          () => false,
          () => true,
        ),
      'the rotated token refused',
    );
  });
});
