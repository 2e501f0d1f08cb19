import { type Db, organizationDomains as d, organizations } from '@atrium/db';
import { and, asc, eq, inArray, ne, sql } from 'drizzle-orm';
import { qualified } from '../common/store.ts';

export type DomainRow = typeof d.$inferSelect;
export type NewDomainRow = typeof d.$inferInsert;
export type DomainChanges = Partial<NewDomainRow>;

/**
 * A domain claim as the stores give it: a row, or one the organization reads decode from
 * `domainTuple` (timestamps then in PostgreSQL's JSON encoding).
 */
export type DomainRecord = Pick<
  DomainRow,
  | 'id'
  | 'organizationId'
  | 'domain'
  | 'state'
  | 'verificationStrategy'
  | 'verificationPrefix'
  | 'verificationToken'
  | 'verificationFailedReason'
> & { createdAt: Date | string; updatedAt: Date | string };

/** `domainTuple` as JSON gives it: positional, in the order `fromDomainTuple` reads. */
export type DomainTuple = [
  id: string,
  organizationId: string,
  domain: string,
  state: DomainRow['state'],
  verificationStrategy: DomainRow['verificationStrategy'],
  verificationPrefix: string,
  verificationToken: string,
  verificationFailedReason: DomainRow['verificationFailedReason'],
  createdAt: string,
  updatedAt: string,
];

/**
 * A domain row as one JSON array, for the organization reads: positional, so PostgreSQL writes
 * no field names per row (bench/README.md, "Issue #20's leftovers").
 */
export const domainTuple = sql`json_build_array(${qualified(d.id)}, ${qualified(d.organizationId)}, ${qualified(d.domain)}, ${qualified(d.state)}, ${qualified(d.verificationStrategy)}, ${qualified(d.verificationPrefix)}, ${qualified(d.verificationToken)}, ${qualified(d.verificationFailedReason)}, ${qualified(d.createdAt)}, ${qualified(d.updatedAt)})`;

/** The record of a `domainTuple`. */
export const fromDomainTuple = (t: DomainTuple): DomainRecord => ({
  id: t[0],
  organizationId: t[1],
  domain: t[2],
  state: t[3],
  verificationStrategy: t[4],
  verificationPrefix: t[5],
  verificationToken: t[6],
  verificationFailedReason: t[7],
  createdAt: t[8],
  updatedAt: t[9],
});

/** Whether an organization of the environment other than `organizationId` holds `domain` verified. */
export async function isVerifiedElsewhere(
  db: Db,
  environmentId: string,
  organizationId: string,
  domain: string,
): Promise<boolean> {
  const [holder] = await db
    .select({ id: d.id })
    .from(d)
    .where(
      and(
        eq(d.environmentId, environmentId),
        eq(d.domain, domain),
        eq(d.state, 'verified'),
        ne(d.organizationId, organizationId),
      ),
    )
    .limit(1);
  return holder !== undefined;
}

/** Which of `domains` an organization of the environment holds verified. */
export async function verifiedAmong(db: Db, environmentId: string, domains: string[]): Promise<Set<string>> {
  if (domains.length === 0) return new Set();
  const rows = await db
    .select({ domain: d.domain })
    .from(d)
    .where(and(eq(d.environmentId, environmentId), inArray(d.domain, domains), eq(d.state, 'verified')));
  return new Set(rows.map((row) => row.domain));
}

/** The pending claims of the environment on any of `domains`, by id. */
export async function pendingClaimsOn(db: Db, environmentId: string, domains: string[]): Promise<DomainRow[]> {
  if (domains.length === 0) return [];
  return db
    .select()
    .from(d)
    .where(and(eq(d.environmentId, environmentId), inArray(d.domain, domains), eq(d.state, 'pending')))
    .orderBy(asc(d.id));
}

/** The organization's claim on `domain`, if it has one. */
export async function findClaim(db: Db, organizationId: string, domain: string): Promise<DomainRow | undefined> {
  const [row] = await db
    .select()
    .from(d)
    .where(and(eq(d.organizationId, organizationId), eq(d.domain, domain)))
    .limit(1);
  return row;
}

export async function insertClaim(db: Db, row: NewDomainRow): Promise<DomainRow | undefined> {
  const [inserted] = await db.insert(d).values(row).returning();
  return inserted;
}

export async function updateClaim(db: Db, id: string, changes: DomainChanges): Promise<DomainRow | undefined> {
  const [updated] = await db.update(d).set(changes).where(eq(d.id, id)).returning();
  return updated;
}

/** Applies `changes` to the environment's pending claims on `domain` other than `exceptId`. */
export async function updatePendingClaims(
  db: Db,
  environmentId: string,
  domain: string,
  exceptId: string,
  changes: DomainChanges,
): Promise<DomainRow[]> {
  return db
    .update(d)
    .set(changes)
    .where(and(eq(d.environmentId, environmentId), eq(d.domain, domain), eq(d.state, 'pending'), ne(d.id, exceptId)))
    .returning();
}

/**
 * Counts one more domain of the organization unless it holds `limit` already; false when it
 * does. The condition is re-checked on the newest row after a concurrent writer commits.
 */
export async function countDomain(db: Db, organizationId: string, limit: number): Promise<boolean> {
  const counted = await db
    .update(organizations)
    .set({ domainCount: sql`${organizations.domainCount} + 1` })
    .where(and(eq(organizations.id, organizationId), sql`${organizations.domainCount} < ${limit}`))
    .returning({ id: organizations.id });
  return counted.length > 0;
}

export async function uncountDomain(db: Db, organizationId: string): Promise<void> {
  await db
    .update(organizations)
    .set({ domainCount: sql`${organizations.domainCount} - 1` })
    .where(eq(organizations.id, organizationId));
}
