import { agentAccessTokens, agentApiKeys, agentIdentities, agentRegistrations, type Db } from '@atrium/db';
import { and, eq, gt, isNull, or } from 'drizzle-orm';
import { orNotFound, scopedId } from '../common/store.ts';
import type { Scope } from '../kernel/scope.ts';
import { assertBelowParentQuota } from '../quotas/store.ts';

export type RegistrationRow = typeof agentRegistrations.$inferSelect;
export type IdentityRow = typeof agentIdentities.$inferSelect;

/** A registration of the environment with its agent identity, or 404. */
export async function findRegistration(
  db: Db,
  environmentId: string,
  id: string,
): Promise<{ registration: RegistrationRow; identity: IdentityRow }> {
  const [found] = await db
    .select({ registration: agentRegistrations, identity: agentIdentities })
    .from(agentRegistrations)
    .innerJoin(agentIdentities, eq(agentIdentities.id, agentRegistrations.agentIdentityId))
    .where(scopedId(agentRegistrations, environmentId, id))
    .limit(1);
  return orNotFound(found, 'agent_registration', id);
}

/** The live (unrevoked, unexpired) API key of a verified registration of the environment, by hash. */
export async function liveApiKey(db: Db, environmentId: string, keyHash: string, now: Date) {
  const [found] = await db
    .select({ registrationId: agentApiKeys.registrationId, expiresAt: agentApiKeys.expiresAt })
    .from(agentApiKeys)
    .innerJoin(agentRegistrations, eq(agentRegistrations.id, agentApiKeys.registrationId))
    .where(
      and(
        eq(agentApiKeys.keyHash, keyHash),
        eq(agentApiKeys.environmentId, environmentId),
        isNull(agentApiKeys.revokedAt),
        or(isNull(agentApiKeys.expiresAt), gt(agentApiKeys.expiresAt, now)),
        eq(agentRegistrations.environmentId, environmentId),
        eq(agentRegistrations.status, 'verified'),
      ),
    )
    .limit(1);
  return found;
}

/** Whether an access token (`jti`) is live and belongs to a verified registration of the organization. */
export async function isLiveAccessToken(
  db: Db,
  environmentId: string,
  token: { jti: string; registrationId: string; organizationId: string },
  now: Date,
): Promise<boolean> {
  const [found] = await db
    .select({ id: agentAccessTokens.id })
    .from(agentAccessTokens)
    .innerJoin(agentRegistrations, eq(agentRegistrations.id, agentAccessTokens.registrationId))
    .where(
      and(
        eq(agentAccessTokens.id, token.jti),
        eq(agentAccessTokens.environmentId, environmentId),
        eq(agentAccessTokens.registrationId, token.registrationId),
        isNull(agentAccessTokens.revokedAt),
        gt(agentAccessTokens.expiresAt, now),
        eq(agentRegistrations.environmentId, environmentId),
        eq(agentRegistrations.organizationId, token.organizationId),
        eq(agentRegistrations.status, 'verified'),
      ),
    )
    .limit(1);
  return found !== undefined;
}

/** The rows one registration is stored as: its identity, itself, one API key, one access token. */
export interface NewRegistration {
  identity: typeof agentIdentities.$inferInsert;
  registration: typeof agentRegistrations.$inferInsert;
  apiKey: typeof agentApiKeys.$inferInsert;
  accessToken: typeof agentAccessTokens.$inferInsert;
}

export async function insertRegistration(tx: Db, rows: NewRegistration): Promise<RegistrationRow | undefined> {
  await tx.insert(agentIdentities).values(rows.identity);
  const [registration] = await tx.insert(agentRegistrations).values(rows.registration).returning();
  if (!registration) return undefined;
  await tx.insert(agentApiKeys).values(rows.apiKey);
  await tx.insert(agentAccessTokens).values(rows.accessToken);
  return registration;
}

/**
 * Marks a registration (of any environment) revoked, with every key and token it holds; the
 * registration as it now is, or undefined if there is none.
 */
export async function revokeRegistration(tx: Db, id: string, now: Date): Promise<RegistrationRow | undefined> {
  const [row] = await tx
    .update(agentRegistrations)
    .set({ status: 'revoked', updatedAt: now })
    .where(eq(agentRegistrations.id, id))
    .returning();
  if (!row) return undefined;
  const held = (table: typeof agentApiKeys | typeof agentAccessTokens) =>
    and(eq(table.environmentId, row.environmentId), eq(table.registrationId, row.id), isNull(table.revokedAt));
  await tx.update(agentApiKeys).set({ revokedAt: now }).where(held(agentApiKeys));
  await tx.update(agentAccessTokens).set({ revokedAt: now }).where(held(agentAccessTokens));
  return row;
}

/** Refuses a registration that would take the organization past `agentRegistrationsPerOrganization`; the caller holds its row. */
export function assertBelowAgentRegistrationsPerOrganization(
  tx: Db,
  scope: Scope,
  organizationId: string,
): Promise<void> {
  return assertBelowParentQuota(
    tx,
    scope,
    'agentRegistrationsPerOrganization',
    { table: agentRegistrations, parent: agentRegistrations.organizationId },
    organizationId,
  );
}
