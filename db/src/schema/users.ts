import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';
import { organizations } from './organizations.ts';

/** Users of an environment (upstream's user-management shape); e-mail unique case-insensitively. */
// @owner routers/src/users
export const users = pgTable(
  'users',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    email: text('email').notNull(),
    emailVerified: boolean('email_verified').notNull().default(false),
    firstName: text('first_name'),
    lastName: text('last_name'),
    profilePictureUrl: text('profile_picture_url'),
    /** A BCP 47 tag as the caller sent it (upstream's `locale`). */
    locale: text('locale'),
    /** When a client token was last issued for the user (Atrium's sign-in). */
    lastSignInAt: ts('last_sign_in_at'),
    externalId: text('external_id'),
    metadata: jsonb('metadata').$type<Record<string, string>>().notNull().default(sql`'{}'::jsonb`),
    /** A PHC-style hash string (`$scrypt$...` of our own, or an imported one); never returned. */
    passwordHash: text('password_hash'),
    /** Upstream's `password_hash_type` of `password_hash` (`scrypt` for our own). */
    passwordHashType: text('password_hash_type'),
    ...timestamps,
  },
  (t) => [
    index('users_environment_id_idx').on(t.environmentId, t.id),
    uniqueIndex('users_email_unique').on(t.environmentId, sql`lower(${t.email})`),
    uniqueIndex('users_external_id_unique').on(t.environmentId, t.externalId),
  ],
);

export const MEMBERSHIP_STATUSES = ['active', 'inactive', 'pending'] as const;
export type MembershipStatus = (typeof MEMBERSHIP_STATUSES)[number];

/** A user's membership of an organization: one per user and organization. */
// @owner routers/src/organization-memberships
export const organizationMemberships = pgTable(
  'organization_memberships',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    userId: idText('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    status: text('status').$type<MembershipStatus>().notNull().default('active'),
    directoryManaged: boolean('directory_managed').notNull().default(false),
    customAttributes: jsonb('custom_attributes').$type<Record<string, string>>().notNull().default(sql`'{}'::jsonb`),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('organization_memberships_user_org_unique').on(t.organizationId, t.userId),
    index('organization_memberships_environment_id_idx').on(t.environmentId, t.id),
    index('organization_memberships_user_idx').on(t.environmentId, t.userId, t.id),
    index('organization_memberships_organization_idx').on(t.environmentId, t.organizationId, t.id),
  ],
);
