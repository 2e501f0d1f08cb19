import { environments, openDb } from '@atrium/db';
import { eq, sql } from 'drizzle-orm';
import { afterEach, describe, expect, inject, it } from 'vitest';

/**
 * On PostgreSQL every statement Drizzle sends runs as a named prepared statement (one round
 * trip once its connection has seen it, no re-planning), inside transactions too; DB_PREPARE=false
 * (for poolers that cannot keep them) sends none.
 */
const databaseUrl = inject('databaseUrl');

describe.skipIf(!databaseUrl)('prepared statements (PostgreSQL only)', () => {
  const handles: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(handles.splice(0).map((h) => h.close()));
  });

  async function preparedOnTheConnection(prepare: boolean | undefined) {
    // One statement connection, so the session that ran the statements is the one asked; a
    // transaction runs on a connection of its own and is asked from inside.
    const handle = await openDb({ databaseUrl: databaseUrl as string, poolSize: 2, statementConnections: 1, prepare });
    handles.push(handle);
    const lookup = () =>
      handle.db.select({ id: environments.id }).from(environments).where(eq(environments.id, 'env_x'));
    await lookup();
    await lookup();
    const inTransaction = await handle.db.transaction(async (tx) => {
      await tx.select({ name: environments.name }).from(environments).where(eq(environments.name, 'nobody'));
      return tx.execute(sql`select statement from pg_prepared_statements`);
    });
    const rows = await handle.db.execute(sql`select statement from pg_prepared_statements`);
    return [
      ...(rows as unknown as { statement: string }[]),
      ...(inTransaction as unknown as { statement: string }[]),
    ].map((r) => r.statement);
  }

  it('prepares every query once per connection, also in a transaction, by default', async () => {
    const statements = await preparedOnTheConnection(undefined);
    expect(statements.filter((s) => s.includes('"environments"."id" = $1'))).toHaveLength(1);
    expect(statements.some((s) => s.includes('"environments"."name" = $1'))).toBe(true);
  });

  it('prepares nothing with prepare: false', async () => {
    expect(await preparedOnTheConnection(false)).toEqual([]);
  });
});
