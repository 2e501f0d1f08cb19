import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, primaryKey, smallint, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';
import { organizations } from './organizations.ts';
import { roles } from './roles.ts';
import { users } from './users.ts';

/** Upstream's directory types (`@workos/openapi-spec`, `Directory.type`). */
export const DIRECTORY_TYPES = [
  'azure scim v2.0',
  'bamboohr',
  'breathe hr',
  'cezanne hr',
  'cyberark scim v2.0',
  'fourth hr',
  'generic scim v2.0',
  'gsuite directory',
  'hibob',
  'sailpoint scim v2.0',
  'jump cloud scim v2.0',
  'okta scim v2.0',
  'onelogin scim v2.0',
  'people hr',
  'personio',
  'pingfederate scim v2.0',
  'rippling scim v2.0',
  's3',
  'sftp',
  'sftp workday',
  'workday',
] as const;
export type DirectoryType = (typeof DIRECTORY_TYPES)[number];

/**
 * Upstream's directory states (the wire's `state`). A directory is `unlinked` until its identity
 * provider first authenticates with the SCIM token, then `linked`; `deleting` while a delete
 * deprovisions what it made.
 */
export const DIRECTORY_STATES = ['linked', 'validating', 'invalid_credentials', 'unlinked', 'deleting'] as const;
export type DirectoryState = (typeof DIRECTORY_STATES)[number];

export const DIRECTORY_USER_STATES = ['active', 'suspended', 'inactive'] as const;
export type DirectoryUserState = (typeof DIRECTORY_USER_STATES)[number];

/**
 * An organization's directory: where its identity provider pushes users and groups over SCIM 2.0.
 * The SCIM bearer token is stored only as its SHA-256 (`token_hash`, unique); rotating replaces it.
 */
// @owner routers/src/directories
export const directories = pgTable(
  'directories',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    type: text('type').$type<DirectoryType>().notNull(),
    name: text('name').notNull(),
    state: text('state').$type<DirectoryState>().notNull().default('unlinked'),
    /** Upstream's `external_key`: a random key naming the directory outside Atrium. */
    externalKey: text('external_key').notNull(),
    /** Upstream's deprecated `domain`; absent unless set. */
    domain: text('domain'),
    tokenHash: text('token_hash').notNull(),
    /** The first characters of the token (`scim_` and 8 more): enough to name it, never to use it. */
    tokenPrefix: text('token_prefix').notNull(),
    /** When the identity provider last wrote through SCIM (the DirectorySync widget's "last sync"). */
    lastSyncAt: ts('last_sync_at'),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('directories_token_hash_unique').on(t.tokenHash),
    index('directories_environment_idx').on(t.environmentId, t.id),
    index('directories_organization_idx').on(t.environmentId, t.organizationId, t.id),
  ],
);

/**
 * A user as the directory's identity provider pushed it (SCIM `/Users`). `attributes` is the SCIM
 * resource as last written (upstream's `raw_attributes`); the columns are what Atrium reads from
 * it. `user_id` is the Atrium user it provisions (null once that user is deleted). `version`
 * counts writes (the SCIM ETag).
 */
// @owner routers/src/directories
export const directoryUsers = pgTable(
  'directory_users',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    directoryId: idText('directory_id')
      .notNull()
      .references(() => directories.id, { onDelete: 'cascade' }),
    organizationId: idText('organization_id').notNull(),
    /** SCIM `userName`, unique per directory case-insensitively (RFC 7643 section 4.1.1). */
    userName: text('user_name').notNull(),
    /** SCIM `externalId`: the identity provider's id (upstream's `idp_id`, else the SCIM id). */
    externalId: text('external_id'),
    email: text('email'),
    firstName: text('first_name'),
    lastName: text('last_name'),
    state: text('state').$type<DirectoryUserState>().notNull().default('active'),
    attributes: jsonb('attributes').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    customAttributes: jsonb('custom_attributes').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    userId: idText('user_id').references(() => users.id, { onDelete: 'set null' }),
    version: integer('version').notNull().default(1),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('directory_users_user_name_unique').on(t.directoryId, sql`lower(${t.userName})`),
    uniqueIndex('directory_users_external_id_unique').on(t.directoryId, t.externalId),
    index('directory_users_directory_idx').on(t.environmentId, t.directoryId, t.id),
    index('directory_users_user_idx').on(t.userId),
  ],
);

/**
 * A group as the directory's identity provider pushed it (SCIM `/Groups`). `role_id`, set by the
 * organization's operator, maps the group to a role: members of mapped groups get those roles.
 */
// @owner routers/src/directories
export const directoryGroups = pgTable(
  'directory_groups',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    directoryId: idText('directory_id')
      .notNull()
      .references(() => directories.id, { onDelete: 'cascade' }),
    organizationId: idText('organization_id').notNull(),
    displayName: text('display_name').notNull(),
    externalId: text('external_id'),
    attributes: jsonb('attributes').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    roleId: idText('role_id').references(() => roles.id, { onDelete: 'set null' }),
    version: integer('version').notNull().default(1),
    ...timestamps,
  },
  (t) => [
    uniqueIndex('directory_groups_external_id_unique').on(t.directoryId, t.externalId),
    index('directory_groups_directory_idx').on(t.environmentId, t.directoryId, t.id),
    index('directory_groups_display_name_idx').on(t.directoryId, sql`lower(${t.displayName})`),
  ],
);

/** A directory user's membership of a directory group (SCIM `Group.members`). */
// @owner routers/src/directories
export const directoryGroupMembers = pgTable(
  'directory_group_members',
  {
    environmentId: environmentIdColumn(),
    groupId: idText('group_id')
      .notNull()
      .references(() => directoryGroups.id, { onDelete: 'cascade' }),
    directoryUserId: idText('directory_user_id')
      .notNull()
      .references(() => directoryUsers.id, { onDelete: 'cascade' }),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'directory_group_members_pkey', columns: [t.groupId, t.directoryUserId] }),
    index('directory_group_members_user_idx').on(t.directoryUserId, t.groupId),
  ],
);

/** What a directory's quota shards count: its users or its groups. */
export const DIRECTORY_QUOTA_KINDS = ['users', 'groups'] as const;
export type DirectoryQuotaKind = (typeof DIRECTORY_QUOTA_KINDS)[number];

/**
 * How many users (or groups) a directory holds, as a counter split over a few rows (`shard`), so
 * that concurrent SCIM creates of one directory seldom wait on one another: a create adds one to
 * a shard below its share of the quota, a delete takes one from a shard above zero, and the sum
 * of a directory's shards is the number of its users (groups). See routers/src/directories/quota.ts.
 */
// @owner routers/src/directories
export const directoryQuotaShards = pgTable(
  'directory_quota_shards',
  {
    environmentId: environmentIdColumn(),
    directoryId: idText('directory_id')
      .notNull()
      .references(() => directories.id, { onDelete: 'cascade' }),
    kind: text('kind').$type<DirectoryQuotaKind>().notNull(),
    shard: smallint('shard').notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [primaryKey({ name: 'directory_quota_shards_pkey', columns: [t.directoryId, t.kind, t.shard] })],
);
