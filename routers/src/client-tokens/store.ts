import { type Db, organizations, perHandle } from '@atrium/db';
import { and, eq, sql } from 'drizzle-orm';

/** Whether the organization is still in the environment (a user-less widget token's check on every use). */
const organizationExistsRead = perHandle((db: Db) =>
  db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(eq(organizations.id, sql.placeholder('org')), eq(organizations.environmentId, sql.placeholder('env'))))
    .limit(1)
    .prepare('widget_organization_exists'),
);

export async function organizationExists(db: Db, environmentId: string, organizationId: string): Promise<boolean> {
  const rows = await organizationExistsRead(db).execute({ env: environmentId, org: organizationId });
  return rows.length > 0;
}
