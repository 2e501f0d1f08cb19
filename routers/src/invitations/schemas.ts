import { INVITATION_STATES } from '@atrium/db';
import { z } from 'zod';
import { Id, ListParams, listOf, StrictInt, Timestamp } from '../common/schemas.ts';

const invitationFields = {
  object: z.literal('invitation'),
  id: z.string(),
  email: z.string(),
  state: z.enum(INVITATION_STATES),
  accepted_at: Timestamp.nullable(),
  revoked_at: Timestamp.nullable(),
  expires_at: Timestamp,
  organization_id: z.string().nullable(),
  inviter_user_id: z.string().nullable(),
  accepted_user_id: z.string().nullable(),
  role_slug: z.string().nullable(),
};

/** Upstream's invitation object (the SDK's `InvitationResponse`): the token and its link included. */
export const Invitation = z
  .object({
    ...invitationFields,
    token: z.string(),
    accept_invitation_url: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Invitation' });
export type Invitation = z.infer<typeof Invitation>;

/** The data of `invitation.*` events (the SDK's `InvitationEventResponse`): no token, no link. */
export type InvitationEventData = Omit<Invitation, 'token' | 'accept_invitation_url'>;

export const InvitationList = listOf(Invitation);

export const InvitationIdInput = z.object({ id: Id });
export const InvitationTokenInput = z.object({ token: z.string().min(1).max(256) });

/** Upstream's locales are BCP 47 tags (`en`, `pt-BR`); the mail is English whatever it says. */
const Locale = z.string().max(35);

export const MAX_EXPIRES_IN_DAYS = 30;
export const DEFAULT_EXPIRES_IN_DAYS = 7;

export const SendInvitationInput = z.object({
  email: z.string().trim().max(320).pipe(z.email()),
  organization_id: Id.optional(),
  expires_in_days: StrictInt.pipe(z.number().int().min(1).max(MAX_EXPIRES_IN_DAYS)).optional(),
  inviter_user_id: Id.optional(),
  role_slug: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'role_slug must be lower-case letters, digits, - and _')
    .optional(),
  locale: Locale.optional(),
});

export const ResendInvitationInput = z.object({ id: Id, locale: Locale.optional() });

export const ListInvitationsInput = ListParams.extend({
  organization_id: Id.optional(),
  email: z.string().trim().max(320).optional(),
});
