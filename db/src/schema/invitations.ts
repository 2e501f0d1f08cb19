import { sql } from 'drizzle-orm';
import { index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';
import { organizations } from './organizations.ts';
import { users } from './users.ts';

/** Stored states; `expired` is also answered for a `pending` row past `expires_at` (never rewritten on read). */
export const INVITATION_STATES = ['pending', 'accepted', 'revoked', 'expired'] as const;
export type InvitationState = (typeof INVITATION_STATES)[number];

/**
 * An invitation of an e-mail address, optionally into an organization with a role. The token is
 * kept twice: its SHA-256 for lookups by token, and sealed under the master key (bound to the
 * invitation id) because every read of the invitation shows it, as upstream does.
 */
// @owner routers/src/invitations
export const invitations = pgTable(
  'invitations',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    email: text('email').notNull(),
    state: text('state').$type<InvitationState>().notNull().default('pending'),
    organizationId: idText('organization_id').references(() => organizations.id, { onDelete: 'cascade' }),
    inviterUserId: idText('inviter_user_id').references(() => users.id, { onDelete: 'set null' }),
    acceptedUserId: idText('accepted_user_id').references(() => users.id, { onDelete: 'set null' }),
    roleSlug: text('role_slug'),
    tokenHash: text('token_hash').notNull(),
    tokenSealed: text('token_sealed').notNull(),
    expiresAt: ts('expires_at').notNull(),
    acceptedAt: ts('accepted_at'),
    revokedAt: ts('revoked_at'),
    ...timestamps,
  },
  (t) => [
    index('invitations_environment_id_idx').on(t.environmentId, t.id),
    index('invitations_organization_idx').on(t.environmentId, t.organizationId, t.id),
    index('invitations_email_idx').on(t.environmentId, sql`lower(${t.email})`, t.id),
    uniqueIndex('invitations_token_hash_unique').on(t.environmentId, t.tokenHash),
    // One pending invitation per e-mail and organization (no organization counts as one).
    uniqueIndex('invitations_pending_unique')
      .on(t.environmentId, sql`coalesce(${t.organizationId}, '')`, sql`lower(${t.email})`)
      .where(sql`${t.state} = 'pending'`),
  ],
);
