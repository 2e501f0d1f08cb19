import { type Db, type SsoAuthorizationState, ssoAuthorizations } from '@atrium/db';
import { and, desc, eq, inArray } from 'drizzle-orm';

export interface LastSession {
  id: string;
  connectionId: string;
  state: SsoAuthorizationState;
  createdAt: Date;
}

/** The newest sign-in attempt (`sso_authorizations` row) of each connection that has one. */
export async function lastSessionsOf(
  db: Db,
  environmentId: string,
  connectionIds: string[],
): Promise<Map<string, LastSession>> {
  if (connectionIds.length === 0) return new Map();
  const rows = await db
    .selectDistinctOn([ssoAuthorizations.connectionId], {
      id: ssoAuthorizations.id,
      connectionId: ssoAuthorizations.connectionId,
      state: ssoAuthorizations.state,
      createdAt: ssoAuthorizations.createdAt,
    })
    .from(ssoAuthorizations)
    .where(
      and(eq(ssoAuthorizations.environmentId, environmentId), inArray(ssoAuthorizations.connectionId, connectionIds)),
    )
    .orderBy(ssoAuthorizations.connectionId, desc(ssoAuthorizations.id));
  return new Map(rows.map((row) => [row.connectionId, row]));
}
