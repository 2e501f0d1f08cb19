import { authenticateClientToken } from '@atrium/routers';
import { describe, expect, it } from 'vitest';
import { clientSetup } from '../helpers/client.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { adminCaller } from '../helpers/tokens.ts';
import { newEnvironment } from '../helpers/world.ts';

// The environment a client token names is cached per process (as API keys are); the session is
// read on every request, so revocation still counts from its commit.
describe('client token verification with the environment cached', () => {
  it('reads the environment once, sees a flag change at once, and a revocation at once', async () => {
    const env = await newEnvironment();
    const setup = await clientSetup(env);
    let selects = 0;
    const db = new Proxy(env.deps.db, {
      get(target, key, receiver) {
        if (key === 'select' || key === 'selectDistinct') selects += 1;
        return Reflect.get(target, key, receiver);
      },
    });
    const deps = { ...env.deps, db };
    const header = `Bearer ${setup.token}`;
    const first = await authenticateClientToken(deps, header);
    const afterFirst = selects;
    expect(first.env.flags.groups).toBe(true);
    await authenticateClientToken(deps, header);
    // Second time no query is built: the environment came from the cache, and the session read is
    // a statement prepared at its first use (that it still runs is the revocation below).
    expect(selects - afterFirst).toBe(0);

    await (await adminCaller()).flags.set({ environment: env.environmentId, flag: 'groups', enabled: false });
    expect((await authenticateClientToken(deps, header)).env.flags.groups).toBe(false);

    await sdkFor(env).userManagement.revokeSession({ sessionId: String(setup.claims.sid) });
    await expect(authenticateClientToken(deps, header)).rejects.toMatchObject({ status: 403 });
  });
});
