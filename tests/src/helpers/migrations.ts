import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { migrationsFolder } from '@atrium/db';
import type { PGlite } from '@electric-sql/pglite';
import { expect } from 'vitest';

async function apply(db: PGlite, file: string) {
  const text = readFileSync(join(migrationsFolder, file), 'utf8');
  for (const statement of text.split('--> statement-breakpoint')) await db.exec(statement);
}

/**
 * Migrates `db` by the committed files up to migration `number` (e.g. '0020'), not included;
 * resolves with a function that then applies that one, for tests of what it does to older data.
 */
export async function migrateUpTo(db: PGlite, number: string): Promise<() => Promise<void>> {
  const files = readdirSync(migrationsFolder)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  const target = files.findIndex((f) => f.startsWith(`${number}_`));
  expect(target).toBeGreaterThan(0);
  for (const file of files.slice(0, target)) await apply(db, file);
  return () => apply(db, files[target] as string);
}
