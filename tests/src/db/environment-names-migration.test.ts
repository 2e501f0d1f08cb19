import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateUpTo } from '../helpers/migrations.ts';

/**
 * Migration 0020 makes environment names unique. A database made before it may hold duplicates
 * (two processes starting at once made two `development`s): the oldest keeps the name, each
 * later one is renamed `<name>-<id>`, and the unique index then holds. On a PGlite of its own,
 * migrated up to 0019 by the committed files.
 */
const db = new PGlite();
afterAll(() => db.close());

describe('migration 0020 (unique environment names)', () => {
  it('keeps the oldest of each duplicate name, renames the later ones, and then refuses a duplicate', async () => {
    const applyTarget = await migrateUpTo(db, '0020');

    const insert = (id: string, name: string) =>
      db.query('insert into environments (id, name, client_id) values ($1, $2, $3)', [id, name, `client_${id}`]);
    await insert('env_01A', 'development');
    await insert('env_01B', 'development');
    await insert('env_01C', 'staging');
    await insert('env_01D', 'development');

    await applyTarget();
    const { rows } = await db.query<{ id: string; name: string }>('select id, name from environments order by id');
    expect(rows).toEqual([
      { id: 'env_01A', name: 'development' },
      { id: 'env_01B', name: 'development-env_01B' },
      { id: 'env_01C', name: 'staging' },
      { id: 'env_01D', name: 'development-env_01D' },
    ]);
    await expect(insert('env_01E', 'staging')).rejects.toMatchObject({ code: '23505' });
  }, 60_000);
});
