import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';

// @owner routers/src/organizations
export const organizations = pgTable(
  'organizations',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    name: text('name').notNull(),
    externalId: text('external_id'),
    metadata: jsonb('metadata').$type<Record<string, string>>().notNull().default(sql`'{}'::jsonb`),
    billingCustomerId: text('billing_customer_id'),
    allowProfilesOutsideOrganization: boolean('allow_profiles_outside_organization').notNull().default(false),
    /**
     * How many domains the organization holds, kept by every write of its domains: the quota
     * check, as a condition of the UPDATE that bumps it, holds under concurrent single-statement
     * creates (PostgreSQL re-checks an updated row's condition on its newest version).
     */
    domainCount: integer('domain_count').notNull().default(0),
    /**
     * How many days its audit log events are kept (`PUT /organizations/{id}/audit_logs_retention`):
     * 30 to 330 in steps of 30, or 365 to 3650 in steps of 365 (upstream's values).
     */
    auditLogsRetentionDays: integer('audit_logs_retention_days').notNull().default(365),
    ...timestamps,
  },
  (t) => [
    index('organizations_environment_id_idx').on(t.environmentId, t.id),
    uniqueIndex('organizations_external_id_unique').on(t.environmentId, t.externalId),
  ],
);

export const DOMAIN_STATES = ['pending', 'verified', 'failed'] as const;
export type DomainState = (typeof DOMAIN_STATES)[number];
export const VERIFICATION_STRATEGIES = ['dns', 'manual'] as const;
export type VerificationStrategy = (typeof VERIFICATION_STRATEGIES)[number];
export const DOMAIN_FAILURE_REASONS = [
  'domain_verified_by_other_organization',
  'domain_verification_period_expired',
] as const;
export type DomainFailureReason = (typeof DOMAIN_FAILURE_REASONS)[number];

/**
 * One organization's claim on a domain. Several organizations may claim a domain while it is
 * pending; at most one holds it verified (the partial unique index).
 */
// @owner routers/src/organization-domains
export const organizationDomains = pgTable(
  'organization_domains',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    domain: text('domain').notNull(),
    state: text('state').$type<DomainState>().notNull(),
    verificationStrategy: text('verification_strategy').$type<VerificationStrategy>().notNull().default('dns'),
    verificationPrefix: text('verification_prefix').notNull(),
    verificationToken: text('verification_token').notNull(),
    verificationFailedReason: text('verification_failed_reason').$type<DomainFailureReason>(),
    /** When the current verification period began (create, or the verify call that restarted it). */
    verificationStartedAt: ts('verification_started_at'),
    /** When the DNS worker should next look; null when nothing is scheduled. */
    nextCheckAt: ts('next_check_at'),
    lastCheckedAt: ts('last_checked_at'),
    checkAttempts: integer('check_attempts').notNull().default(0),
    verificationError: text('verification_error'),
    /** The domain's NS host names as the DNS worker last found them; null until a lookup answered. */
    nameServers: text('name_servers').array(),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('organization_domains_org_domain_unique').on(t.organizationId, t.domain),
    uniqueIndex('organization_domains_verified_unique')
      .on(t.environmentId, t.domain)
      .where(sql`${t.state} = 'verified'`),
    uniqueIndex('organization_domains_token_unique').on(t.verificationToken),
    index('organization_domains_environment_domain_idx').on(t.environmentId, t.domain),
    index('organization_domains_organization_idx').on(t.organizationId, t.id),
    // Led by the environment, so the DNS worker can take due checks round-robin by environment;
    // the pending-verifications quota counts an environment's scheduled checks on it too.
    index('organization_domains_due_idx')
      .on(t.environmentId, t.nextCheckAt)
      .where(sql`${t.state} = 'pending' and ${t.nextCheckAt} is not null`),
  ],
);

/** Upstream's IT contact intents: the Admin Portal features an invited contact may configure. */
export const IT_CONTACT_INTENTS = [
  'sso',
  'directory_sync',
  'log_streams',
  'domain_verification',
  'bring_your_own_key',
] as const;
export type ItContactIntent = (typeof IT_CONTACT_INTENTS)[number];

/**
 * An organization's IT contacts (e-mail unique per organization, stored lower-cased). A contact
 * may hold the organization's one active Admin Portal invitation (`invited_at` set, with its
 * intents): the partial unique index keeps it to one per organization.
 */
// @owner routers/src/it-contacts
export const itContacts = pgTable(
  'it_contacts',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    invitationIntents: jsonb('invitation_intents').$type<ItContactIntent[]>(),
    invitedAt: ts('invited_at'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('it_contacts_organization_email_unique').on(t.organizationId, t.email),
    uniqueIndex('it_contacts_active_invitation_unique').on(t.organizationId).where(sql`${t.invitedAt} is not null`),
    index('it_contacts_organization_idx').on(t.environmentId, t.organizationId, t.id),
  ],
);
