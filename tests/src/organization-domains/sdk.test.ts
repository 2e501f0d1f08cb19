import { NotFoundException } from '@workos-inc/node';
import { describe, expect, it } from 'vitest';
import { sdkFor } from '../helpers/sdk.ts';
import { newEnvironment, uniqueDomain } from '../helpers/world.ts';

describe('official @workos-inc/node SDK: organization domains', () => {
  it('creates, gets, verifies and deletes a domain', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    const domain = uniqueDomain();
    const created = await workos.organizationDomains.createOrganizationDomain({ organizationId: org.id, domain });
    expect(created).toMatchObject({
      object: 'organization_domain',
      organizationId: org.id,
      domain,
      state: 'pending',
      verificationStrategy: 'dns',
    });
    expect(created.verificationToken).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(created.verificationPrefix).toMatch(/^atrium-domain-verification-/);
    expect(await workos.organizationDomains.getOrganizationDomain(created.id)).toEqual(created);
    const verifying = await workos.organizationDomains.verifyOrganizationDomain(created.id);
    expect(verifying.state).toBe('pending');
    await workos.organizationDomains.deleteOrganizationDomain(created.id);
    await expect(workos.organizationDomains.getOrganizationDomain(created.id)).rejects.toBeInstanceOf(
      NotFoundException,
    );
  });
});
