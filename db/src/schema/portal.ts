import { index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';
import { organizations } from './organizations.ts';

/** The admin-portal intents Atrium serves (issue #23); the others are refused when a link is asked for. */
export const PORTAL_INTENTS = ['domain_verification', 'sso', 'dsync', 'log_streams', 'audit_logs'] as const;
export type PortalIntent = (typeof PORTAL_INTENTS)[number];

/**
 * A single-use admin-portal link (`POST /portal/generate_link`): only the SHA-256 of its secret
 * is kept. Opening it sets `used_at` and starts a portal session; it dies with its organization.
 */
// @owner routers/src/portal
export const portalLinks = pgTable(
  'portal_links',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    intent: text('intent').$type<PortalIntent>().notNull(),
    secretHash: text('secret_hash').notNull(),
    returnUrl: text('return_url'),
    successUrl: text('success_url'),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
    createdAt: timestamps.createdAt,
  },
  (t) => [
    uniqueIndex('portal_links_secret_unique').on(t.secretHash),
    index('portal_links_environment_idx').on(t.environmentId, t.id),
    index('portal_links_expires_idx').on(t.expiresAt),
  ],
);

/**
 * A portal session (the `Path=/portal` cookie holds its id and a secret, stored hashed): an IT
 * admin of one organization for one intent, with no user. Deleting the organization ends it.
 */
// @owner routers/src/portal
export const portalSessions = pgTable(
  'portal_sessions',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    intent: text('intent').$type<PortalIntent>().notNull(),
    secretHash: text('secret_hash').notNull(),
    returnUrl: text('return_url'),
    successUrl: text('success_url'),
    expiresAt: ts('expires_at').notNull(),
    createdAt: timestamps.createdAt,
  },
  (t) => [
    index('portal_sessions_environment_idx').on(t.environmentId, t.id),
    index('portal_sessions_expires_idx').on(t.expiresAt),
  ],
);
