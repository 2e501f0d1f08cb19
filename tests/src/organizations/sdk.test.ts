import { ConflictException, NotFoundException, UnprocessableEntityException } from '@workos-inc/node';
import { describe, expect, it } from 'vitest';
import { sdkFor } from '../helpers/sdk.ts';
import { newEnvironment, uniqueDomain } from '../helpers/world.ts';

describe('official @workos-inc/node SDK: organizations', () => {
  it('creates, gets, gets by external id, updates, lists and deletes', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const domain = uniqueDomain();
    const created = await workos.organizations.createOrganization({
      name: 'Acme',
      externalId: 'sdk-ext-1',
      metadata: { plan: 'pro' },
      domainData: [{ domain, state: 'verified' as never }],
    });
    expect(created).toMatchObject({
      object: 'organization',
      name: 'Acme',
      externalId: 'sdk-ext-1',
      metadata: { plan: 'pro' },
      allowProfilesOutsideOrganization: false,
    });
    expect(created.domains).toEqual([
      expect.objectContaining({ object: 'organization_domain', domain, state: 'verified', organizationId: created.id }),
    ]);

    expect((await workos.organizations.getOrganization(created.id)).id).toBe(created.id);
    expect((await workos.organizations.getOrganizationByExternalId('sdk-ext-1')).id).toBe(created.id);

    const updated = await workos.organizations.updateOrganization({
      organization: created.id,
      name: 'Acme Corp',
      stripeCustomerId: 'cus_9',
      metadata: { plan: 'enterprise' },
    });
    expect(updated).toMatchObject({ name: 'Acme Corp', metadata: { plan: 'enterprise' }, externalId: 'sdk-ext-1' });
    expect(updated.domains).toHaveLength(1);

    const list = await workos.organizations.listOrganizations({ domains: [domain] });
    expect(list.data.map((o) => o.id)).toEqual([created.id]);
    expect(list.listMetadata).toEqual({ before: null, after: null });

    await workos.organizations.deleteOrganization(created.id);
    await expect(workos.organizations.getOrganization(created.id)).rejects.toBeInstanceOf(NotFoundException);
  });

  it('walks every page with autoPagination', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const ids: string[] = [];
    for (let i = 0; i < 105; i++) ids.push((await env.caller.organizations.create({ name: `O${i}` })).id);
    // Without a limit the SDK follows list_metadata.after with limit=100 until it is null.
    const all = await (await workos.organizations.listOrganizations()).autoPagination();
    expect(all.map((o) => o.id).sort()).toEqual([...ids].sort());
    expect(new Set(all.map((o) => o.id)).size).toBe(105);
    const small = await workos.organizations.listOrganizations({ limit: 7, order: 'asc' });
    expect(small.data.map((o) => o.id)).toEqual(ids.slice(0, 7));
    expect(small.listMetadata.after).toBe(ids[6]);
  });

  it('surfaces the contract errors as the SDK exceptions', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    await workos.organizations.createOrganization({ name: 'A', externalId: 'taken' });
    await expect(workos.organizations.createOrganization({ name: 'B', externalId: 'taken' })).rejects.toBeInstanceOf(
      ConflictException,
    );
    const error = await workos.organizations
      .createOrganization({ name: 'C', domainData: [{ domain: 'gmail.com', state: 'pending' as never }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityException);
    expect((error as UnprocessableEntityException).status).toBe(422);
    expect((error as UnprocessableEntityException).requestID).toMatch(/^[0-9a-f-]{36}$/);
  });
});
