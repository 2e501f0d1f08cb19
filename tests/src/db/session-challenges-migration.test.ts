import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateUpTo } from '../helpers/migrations.ts';

/**
 * Migration 0021 holds session challenges by user too (a widget token is no session): a database
 * made before it keeps its challenges, each taking its session's user. On a PGlite of its own,
 * migrated up to 0020 by the committed files.
 */
const db = new PGlite();
afterAll(() => db.close());

describe('migration 0021 (session challenges held by a user)', () => {
  it('gives each existing challenge its session user, then takes challenges without a session', async () => {
    const applyTarget = await migrateUpTo(db, '0021');

    await db.exec(`
      insert into environments (id, name, client_id) values ('env_01A', 'development', 'client_01A');
      insert into users (id, environment_id, email) values ('user_01A', 'env_01A', 'ada@example.org');
      insert into organizations (id, environment_id, name) values ('org_01A', 'env_01A', 'Acme');
      insert into sessions (id, environment_id, user_id, organization_id, expires_at)
        values ('session_01A', 'env_01A', 'user_01A', 'org_01A', now() + interval '1 hour');
      insert into session_challenges (id, environment_id, session_id, purpose, secret_hash, expires_at)
        values ('auth_challenge_01A', 'env_01A', 'session_01A', 'identity', 'h', now() + interval '10 minutes');
    `);

    await applyTarget();
    const { rows } = await db.query<{ id: string; user_id: string; session_id: string | null }>(
      'select id, user_id, session_id from session_challenges',
    );
    expect(rows).toEqual([{ id: 'auth_challenge_01A', user_id: 'user_01A', session_id: 'session_01A' }]);
    await db.query(
      `insert into session_challenges (id, environment_id, user_id, purpose, secret_hash, expires_at)
       values ('auth_challenge_01B', 'env_01A', 'user_01A', 'identity', 'h', now() + interval '10 minutes')`,
    );
    await expect(
      db.query(
        `insert into session_challenges (id, environment_id, purpose, secret_hash, expires_at)
         values ('auth_challenge_01C', 'env_01A', 'identity', 'h', now())`,
      ),
    ).rejects.toMatchObject({ code: '23502' });
  }, 60_000);
});
