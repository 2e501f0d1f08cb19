import postgres from 'postgres';

/**
 * A database of its own on the run's PostgreSQL server, for a test that starts a real server
 * process: such a server owns what it finds (`ATRIUM_ADMIN_TOKEN` retires every other admin
 * token at start), so it must not share the database the other test files use.
 */
export async function scratchDatabase(runUrl: string, label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `atrium_${label}_${process.pid}_${Date.now()}`;
  const admin = postgres(runUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(runUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end({ timeout: 5 });
    },
  };
}
