import { index, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { idText, timestamps, ts } from './columns.ts';
import { environmentIdColumn } from './environments.ts';
import { organizations } from './organizations.ts';
import { organizationMemberships } from './users.ts';

/** A named set of organization memberships inside one organization. */
// @owner routers/src/groups
export const groups = pgTable(
  'groups',
  {
    id: idText('id').primaryKey(),
    environmentId: environmentIdColumn(),
    organizationId: idText('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description'),
    ...timestamps,
  },
  (t) => [index('groups_organization_idx').on(t.environmentId, t.organizationId, t.id)],
);

/**
 * The link between a group and an organization membership. Deleting either side (or the user,
 * or the organization, through their own cascades) removes the link in the same statement.
 */
// @owner routers/src/groups
export const groupMemberships = pgTable(
  'group_memberships',
  {
    environmentId: environmentIdColumn(),
    groupId: idText('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    organizationMembershipId: idText('organization_membership_id')
      .notNull()
      .references(() => organizationMemberships.id, { onDelete: 'cascade' }),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'group_memberships_pkey', columns: [t.groupId, t.organizationMembershipId] }),
    /** Keyset list of a group's memberships. */
    index('group_memberships_group_idx').on(t.environmentId, t.groupId, t.organizationMembershipId),
    /**
     * Keyset list of a membership's groups, and the cascade from a deleted membership: it leads
     * with the membership id (which implies the environment) so the foreign key's lookup uses it.
     */
    index('group_memberships_membership_idx').on(t.organizationMembershipId, t.groupId),
  ],
);
