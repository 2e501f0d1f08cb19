import { newId, organizationMemberships, paginate, users } from '@atrium/db';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import type { Scope } from '../context.ts';
import { emailTaken, userExternalIdTaken as externalIdTaken, notFound } from '../errors.ts';
import { recordEvent } from '../events/record.ts';
import { findMemberships, toOrganizationMembership } from '../organization-memberships/service.ts';
import type { CreateUserInput, ListUsersInput, UpdateUserInput, User } from './schemas.ts';

type UserRow = typeof users.$inferSelect;

/** The single place that turns a user row into its wire shape. */
export function toUser(row: UserRow): User {
  return {
    object: 'user',
    id: row.id,
    email: row.email,
    email_verified: row.emailVerified,
    first_name: row.firstName,
    last_name: row.lastName,
    profile_picture_url: row.profilePictureUrl,
    last_sign_in_at: null,
    external_id: row.externalId,
    metadata: row.metadata,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

const inEnvironment = (scope: Scope, id: string) => and(eq(users.environmentId, scope.env.id), eq(users.id, id));

export async function getUser(scope: Scope, id: string): Promise<User> {
  const [row] = await scope.db.select().from(users).where(inEnvironment(scope, id)).limit(1);
  if (!row) throw notFound('user', id);
  return toUser(row);
}

export async function listUsers(scope: Scope, input: z.infer<typeof ListUsersInput>) {
  const params = pageParams(input);
  const byEmail = input.email ? eq(sql`lower(${users.email})`, input.email.toLowerCase()) : undefined;
  const byOrganization = input.organization_id
    ? inArray(
        users.id,
        scope.db
          .select({ id: organizationMemberships.userId })
          .from(organizationMemberships)
          .where(
            and(
              eq(organizationMemberships.environmentId, scope.env.id),
              eq(organizationMemberships.organizationId, input.organization_id),
            ),
          ),
      )
    : undefined;
  const page = await paginate(
    params,
    users.id,
    (q) =>
      scope.db
        .select()
        .from(users)
        .where(and(eq(users.environmentId, scope.env.id), byEmail, byOrganization, q.keyset))
        .orderBy(q.orderBy)
        .limit(q.limit),
    (row) => row.id,
  );
  return asList(page, toUser);
}

export async function createUser(scope: Scope, input: z.infer<typeof CreateUserInput>): Promise<User> {
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    const [row] = await tx
      .insert(users)
      .values({
        id: newId('user'),
        environmentId: scope.env.id,
        email: input.email,
        emailVerified: input.email_verified ?? false,
        firstName: input.first_name ?? null,
        lastName: input.last_name ?? null,
        externalId: input.external_id ?? null,
        metadata: input.metadata ?? {},
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    const user = toUser(row as UserRow);
    await recordEvent(tx, scope, 'user.created', user);
    return user;
  });
}

/** Fields absent from the body stay as they are; `null` clears a nullable field. */
export async function updateUser(scope: Scope, input: z.infer<typeof UpdateUserInput>): Promise<User> {
  return scope.db.transaction(async (tx) => {
    const [current] = await tx.select().from(users).where(inEnvironment(scope, input.id)).for('update').limit(1);
    if (!current) throw notFound('user', input.id);
    const changes: Partial<typeof users.$inferInsert> = { updatedAt: scope.now() };
    if (input.email !== undefined) changes.email = input.email;
    if (input.email_verified !== undefined) changes.emailVerified = input.email_verified;
    if (input.first_name !== undefined) changes.firstName = input.first_name;
    if (input.last_name !== undefined) changes.lastName = input.last_name;
    if (input.external_id !== undefined) changes.externalId = input.external_id;
    if (input.metadata !== undefined) {
      // As for organizations: the supplied object replaces the metadata; a null value drops its key.
      const next: Record<string, string> = {};
      for (const [key, value] of Object.entries(input.metadata)) if (value !== null) next[key] = value;
      changes.metadata = next;
    }
    const [row] = await tx.update(users).set(changes).where(eq(users.id, current.id)).returning();
    const user = toUser(row as UserRow);
    await recordEvent(tx, scope, 'user.updated', user);
    return user;
  });
}

/**
 * Deletes the user. Their memberships (and through those, their group links) go with them by
 * foreign key in the same statement; each membership's deletion is recorded as an event.
 */
export async function deleteUser(scope: Scope, id: string): Promise<void> {
  await scope.db.transaction(async (tx) => {
    const [current] = await tx.select().from(users).where(inEnvironment(scope, id)).for('update').limit(1);
    if (!current) throw notFound('user', id);
    const memberships = await findMemberships(
      tx,
      and(eq(organizationMemberships.environmentId, scope.env.id), eq(organizationMemberships.userId, id)),
    );
    await tx.delete(users).where(eq(users.id, current.id));
    for (const membership of memberships) {
      await recordEvent(tx, scope, 'organization_membership.deleted', toOrganizationMembership(membership));
    }
    await recordEvent(tx, scope, 'user.deleted', toUser(current));
  });
}
