import postgres from 'postgres';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string | undefined;
  }
}

/** The caller's settings for a server, CLI or SDK; none of them may change what a test sees. */
export const CALLER_ENV = /^(ATRIUM_|WORKOS_|DATABASE_REPLICA_)|^(DATABASE_URL|GEOIP_DATABASE)$/;

/**
 * With DATABASE_URL set, the suite runs on PostgreSQL in a database made for this run (and
 * dropped after it); without it, every worker opens its own in-memory PGlite.
 *
 * DATABASE_URL is read here once; then it and every ATRIUM_*, WORKOS_* and DATABASE_REPLICA_* variable of the
 * caller's shell (the README's walk-through exports several) leave this process's environment,
 * which the test workers, and the servers and CLIs they spawn, inherit. A test that wants one
 * sets it on purpose. (Vitest builds the workers' environment after the global setup has run.)
 */
export default async function setup(project: TestProject) {
  const adminUrl = process.env.DATABASE_URL;
  for (const name of Object.keys(process.env)) if (CALLER_ENV.test(name)) delete process.env[name];
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
