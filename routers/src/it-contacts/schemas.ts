import { IT_CONTACT_INTENTS } from '@atrium/db';
import { z } from 'zod';
import { Id, ListParams, listOf, Timestamp } from '../common/schemas.ts';

/**
 * An IT contact as upstream shows it, plus the Admin Portal invitation it holds (Atrium's
 * addition, null when none), so an invite or a revoke can be read back.
 */
export const ItContact = z
  .object({
    object: z.literal('it_contact'),
    id: z.string(),
    email: z.string(),
    admin_portal_invitation: z
      .object({ intents: z.array(z.enum(IT_CONTACT_INTENTS)), created_at: Timestamp })
      .nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'ItContact' });
export type ItContact = z.infer<typeof ItContact>;

export const ItContactList = listOf(ItContact);

/** The contact's path: it is reached only through its organization. */
const ContactPath = { organization_id: Id, contact_id: Id };

/**
 * The SDK's `listItContacts` reads one page and sends no `limit`, so this list's default page is
 * its largest (100), which is also the default quota of contacts per organization.
 */
export const ListItContactsInput = ListParams.extend({
  organization_id: Id,
  limit: ListParams.shape.limit.removeDefault().default(100),
});

export const CreateItContactInput = z.object({
  organization_id: Id,
  email: z.string().trim().max(320).pipe(z.email()),
});

export const ItContactPathInput = z.object(ContactPath);

export const InviteItContactInput = z.object({
  ...ContactPath,
  intents: z.array(z.enum(IT_CONTACT_INTENTS)).min(1).max(IT_CONTACT_INTENTS.length),
});
