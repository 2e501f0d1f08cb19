import { authenticateClientToken } from '@atrium/routers';
import { describe, expect, it } from 'vitest';
import { ALL_WIDGET_SCOPES, clientSetup } from '../helpers/client.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { adminCaller } from '../helpers/tokens.ts';
import { newEnvironment } from '../helpers/world.ts';

// The environment a client token names is cached per process (as API keys are); what the token is
// bound to (a widget token's membership and its roles' permissions) is read on every request, so a
// demotion or a removal still counts from its commit.
describe('client token verification with the environment cached', () => {
  it('reads the environment once, sees a flag change at once, and a demotion and a removal at once', async () => {
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
    expect(first.principal.permissions).toEqual(ALL_WIDGET_SCOPES);
    await authenticateClientToken(deps, header);
    // Second time no query is built: the environment came from the cache, and the membership read
    // is a statement prepared at its first use (that it still runs is the demotion below).
    expect(selects - afterFirst).toBe(0);

    await (await adminCaller()).flags.set({ environment: env.environmentId, flag: 'groups', enabled: false });
    expect((await authenticateClientToken(deps, header)).env.flags.groups).toBe(false);

    const sdk = sdkFor(env);
    const [membership] = (await sdk.userManagement.listOrganizationMemberships({ userId: setup.userId })).data;
    await sdk.userManagement.updateOrganizationMembership(String(membership?.id), { roleSlug: 'member' });
    expect((await authenticateClientToken(deps, header)).principal.permissions).toEqual([]);
    await sdk.userManagement.deleteOrganizationMembership(String(membership?.id));
    await expect(authenticateClientToken(deps, header)).rejects.toMatchObject({ status: 403 });
  });
});
