import { describe, expect, it } from 'vitest';
import { newEnvironment } from '../helpers/world.ts';

/** The same procedures through tRPC's typed caller (what the typed /trpc client sees). */
describe('organization API keys and IT contacts (caller)', () => {
  it('creates, lists, validates and deletes a key; adds, invites and lists a contact', async () => {
    const { caller } = await newEnvironment();
    const org = await caller.organizations.create({ name: 'Acme' });
    const key = await caller.organizationApiKeys.create({ organization_id: org.id, name: 'k', permissions: ['a:b'] });
    expect(key.value).toMatch(/^sk_org_/);
    const page = await caller.organizationApiKeys.list({ organization_id: org.id, limit: 10, order: 'desc' });
    expect(page.data.map((k) => k.id)).toEqual([key.id]);
    expect((await caller.organizationApiKeys.validate({ value: key.value })).api_key?.permissions).toEqual(['a:b']);
    await caller.organizationApiKeys.delete({ id: key.id });
    expect(await caller.organizationApiKeys.validate({ value: key.value })).toEqual({ api_key: null });
    await expect(caller.organizationApiKeys.delete({ id: key.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });

    const contact = await caller.itContacts.create({ organization_id: org.id, email: 'it@acme.com' });
    await caller.itContacts.invite({ organization_id: org.id, contact_id: contact.id, intents: ['sso'] });
    const contacts = await caller.itContacts.list({ organization_id: org.id, limit: 100, order: 'desc' });
    expect(contacts.data[0]?.admin_portal_invitation?.intents).toEqual(['sso']);
    await caller.itContacts.revoke({ organization_id: org.id, contact_id: contact.id });
    await caller.itContacts.delete({ organization_id: org.id, contact_id: contact.id });
    expect((await caller.itContacts.list({ organization_id: org.id, limit: 100, order: 'desc' })).data).toEqual([]);
  });
});
