import { itContacts } from '@atrium/db';
import { ConflictException, NotFoundException, UnprocessableEntityException } from '@workos-inc/node';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { sdkFor } from '../helpers/sdk.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

const storedContacts = (env: TestEnvironment) =>
  env.deps.db.select().from(itContacts).where(eq(itContacts.environmentId, env.environmentId)).orderBy(itContacts.id);

describe('official SDK: organizations IT contacts', () => {
  it('creates, lists, invites, revokes and deletes, with every required field', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });

    const contact = await workos.organizations.createItContact({ organizationId: org.id, email: 'IT@Acme.com' });
    expect(contact).toEqual({
      object: 'it_contact',
      id: expect.stringMatching(/^it_contact_[0-9A-Z]{26}$/),
      email: 'it@acme.com',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: contact.createdAt,
    });
    const second = await workos.organizations.createItContact({ organizationId: org.id, email: 'ops@acme.com' });

    const listed = await workos.organizations.listItContacts({ organizationId: org.id });
    expect(listed.object).toBe('list');
    expect(listed.data).toEqual([second, contact]);
    expect(listed.listMetadata).toEqual({ before: null, after: null });

    await workos.organizations.inviteItContact({
      organizationId: org.id,
      contactId: contact.id,
      intents: ['sso', 'directory_sync'],
    });
    const invited = (await env.http.get(`/organizations/${org.id}/it_contacts`)).body.data[1];
    expect(invited.admin_portal_invitation).toEqual({
      intents: ['sso', 'directory_sync'],
      created_at: expect.stringMatching(/Z$/),
    });
    // One active invitation per organization: another contact waits until it is revoked.
    await expect(
      workos.organizations.inviteItContact({ organizationId: org.id, contactId: second.id, intents: ['sso'] }),
    ).rejects.toBeInstanceOf(ConflictException);
    // The same contact's invitation is replaced.
    await workos.organizations.inviteItContact({
      organizationId: org.id,
      contactId: contact.id,
      intents: ['log_streams'],
    });
    expect((await storedContacts(env))[0]?.invitationIntents).toEqual(['log_streams']);

    await workos.organizations.revokeItContact({ organizationId: org.id, contactId: contact.id });
    expect((await storedContacts(env))[0]).toMatchObject({ invitationIntents: null, invitedAt: null });
    await workos.organizations.revokeItContact({ organizationId: org.id, contactId: contact.id }); // nothing to revoke
    await workos.organizations.inviteItContact({ organizationId: org.id, contactId: second.id, intents: ['sso'] });
    expect((await storedContacts(env))[1]?.invitationIntents).toEqual(['sso']);

    await workos.organizations.deleteItContact({ organizationId: org.id, contactId: second.id });
    expect((await storedContacts(env)).map((c) => c.id)).toEqual([contact.id]);
    await expect(
      workos.organizations.deleteItContact({ organizationId: org.id, contactId: second.id }),
    ).rejects.toBeInstanceOf(NotFoundException);
    // Deleting the holder freed the invitation.
    await workos.organizations.inviteItContact({ organizationId: org.id, contactId: contact.id, intents: ['sso'] });
  });

  it('refuses a taken e-mail (409), a bad one or bad intents (422), and foreign ids (404), storing nothing', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    const other = await workos.organizations.createOrganization({ name: 'Globex' });
    const contact = await workos.organizations.createItContact({ organizationId: org.id, email: 'it@acme.com' });
    const before = await storedContacts(env);

    await expect(
      workos.organizations.createItContact({ organizationId: org.id, email: 'IT@acme.com' }),
    ).rejects.toMatchObject({ status: 409, code: 'it_contact_already_exists' });
    await expect(
      workos.organizations.createItContact({ organizationId: org.id, email: 'not-an-email' }),
    ).rejects.toBeInstanceOf(UnprocessableEntityException);
    await expect(
      workos.organizations.inviteItContact({ organizationId: org.id, contactId: contact.id, intents: [] }),
    ).rejects.toBeInstanceOf(UnprocessableEntityException);
    await expect(
      workos.organizations.inviteItContact({
        organizationId: org.id,
        contactId: contact.id,
        intents: ['telepathy' as never],
      }),
    ).rejects.toBeInstanceOf(UnprocessableEntityException);
    // A contact reached through another organization is 404.
    await expect(
      workos.organizations.deleteItContact({ organizationId: other.id, contactId: contact.id }),
    ).rejects.toBeInstanceOf(NotFoundException);
    await expect(
      workos.organizations.inviteItContact({ organizationId: other.id, contactId: contact.id, intents: ['sso'] }),
    ).rejects.toBeInstanceOf(NotFoundException);
    await expect(
      workos.organizations.listItContacts({ organizationId: 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ' }),
    ).rejects.toBeInstanceOf(NotFoundException);
    expect(await storedContacts(env)).toEqual(before);
    // The same e-mail may be a contact of another organization.
    await workos.organizations.createItContact({ organizationId: other.id, email: 'it@acme.com' });
  });
});
