import postgres from 'postgres';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string | undefined;
  }
}

/**
 * With DATABASE_URL set, the suite runs on PostgreSQL in a database made for this run (and
 * dropped after it); without it, every worker opens its own in-memory PGlite.
 */
export default async function setup(project: TestProject) {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    project.provide('databaseUrl', undefined);
    return;
  }
  const name = `atrium_test_${Date.now()}_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  project.provide('databaseUrl', url.toString());
  // Migrate once, before the workers start.
  const { openDb } = await import('@atrium/db');
  const handle = await openDb({ databaseUrl: url.toString(), poolSize: 1 });
  await handle.migrate();
  await handle.close();
  return async () => {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end({ timeout: 5 });
  };
}
