import { IT_CONTACT_INTENTS, type ItContactIntent, newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import { conflict } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import type { CreateItContactInput, InviteItContactInput, ItContact, ListItContactsInput } from './schemas.ts';
import {
  assertBelowItContactsPerOrganization,
  deleteItContactRow,
  type ItContactRow,
  insertItContact,
  loadItContact,
  otherActiveInvitation,
  pageOfItContacts,
  setInvitation,
} from './store.ts';

/** The single place that turns a contact row into its wire shape. */
export function toItContact(row: ItContactRow): ItContact {
  return {
    object: 'it_contact',
    id: row.id,
    email: row.email,
    admin_portal_invitation:
      row.invitedAt && row.invitationIntents
        ? { intents: row.invitationIntents, created_at: iso(row.invitedAt) }
        : null,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export async function listItContacts(scope: Scope, input: z.infer<typeof ListItContactsInput>) {
  const params = pageParams(input);
  const organization = await requireOrganization(scope.db, scope, input.organization_id);
  return asList(await pageOfItContacts(scope.db, scope.env.id, organization.id, params), toItContact);
}

/**
 * Adds a contact; its e-mail, lower-cased, is unique in the organization (409
 * `it_contact_already_exists`, also when a concurrent create wins: the unique index).
 */
export async function createItContact(scope: Scope, input: z.infer<typeof CreateItContactInput>): Promise<ItContact> {
  return scope.db.transaction(async (tx) => {
    const organization = await requireOrganization(tx, scope, input.organization_id, 'no key update');
    await assertBelowItContactsPerOrganization(tx, scope, organization.id);
    const now = scope.now();
    const row = await insertItContact(tx, {
      id: newId('itContact'),
      environmentId: scope.env.id,
      organizationId: organization.id,
      email: input.email.toLowerCase(),
      createdAt: now,
      updatedAt: now,
    });
    return toItContact(row);
  });
}

/** Removes the contact, and with it any invitation it held. */
export async function deleteItContact(scope: Scope, organizationId: string, contactId: string): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const contact = await loadItContact(tx, scope.env.id, organizationId, contactId, 'update');
    await deleteItContactRow(tx, scope.env.id, contact.id);
  });
}

/**
 * Gives the contact the organization's Admin Portal invitation for these intents. An
 * organization holds one active invitation: another contact's is 409 (revoke it first); the
 * same contact's is replaced (new intents, new time).
 */
export async function inviteItContact(scope: Scope, input: z.infer<typeof InviteItContactInput>): Promise<void> {
  // In upstream's order, once each, whatever order or repetition the request had.
  const intents: ItContactIntent[] = IT_CONTACT_INTENTS.filter((intent) => input.intents.includes(intent));
  await scope.db.transaction(async (tx) => {
    // The organization's row lock serialises invitations of its contacts.
    const organization = await requireOrganization(tx, scope, input.organization_id, 'no key update');
    const contact = await loadItContact(tx, scope.env.id, organization.id, input.contact_id, 'update');
    if (await otherActiveInvitation(tx, scope.env.id, organization.id, contact.id)) {
      throw conflict(
        'it_contact_invitation_already_active',
        'The organization already has an active Admin Portal invitation; revoke it first.',
      );
    }
    const now = scope.now();
    await setInvitation(tx, scope.env.id, contact.id, intents, now, now);
  });
}

/** Revokes the contact's invitation; revoking when it holds none changes nothing (a retry is safe). */
export async function revokeItContact(scope: Scope, organizationId: string, contactId: string): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const contact = await loadItContact(tx, scope.env.id, organizationId, contactId, 'update');
    if (contact.invitedAt === null) return;
    await setInvitation(tx, scope.env.id, contact.id, null, null, scope.now());
  });
}
