// What every admin command gets (the typed admin client, the printer, the CLI's I/O), apart from
// cli.ts so the command modules it registers (seed.ts) import this and not the CLI back.
import type { AppRouter } from '@atrium/routers';
import { createTRPCClient, httpLink } from '@trpc/client';
import type { Command } from 'commander';

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

export type AdminClient = ReturnType<typeof createAdminClient>;

/** The typed tRPC client of the admin router, authenticated by the admin token. */
export function createAdminClient(url: string, adminToken: string | undefined) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${url.replace(/\/$/, '')}/trpc`,
        headers: () => (adminToken ? { Authorization: `Bearer ${adminToken}` } : {}),
      }),
    ],
  }).admin;
}

/** Prints JSON with --json, else a few aligned `key: value` lines (or a table for lists). */
export function printer(io: CliIo, json: boolean) {
  return (value: unknown) => {
    if (json) {
      io.out(`${JSON.stringify(value, null, 2)}\n`);
      return;
    }
    const rows = Array.isArray(value) ? value : [value];
    if (rows.length === 0) {
      io.out('(none)\n');
      return;
    }
    const lines: string[] = [];
    for (const row of rows) {
      if (row && typeof row === 'object') {
        for (const [key, v] of Object.entries(row)) {
          lines.push(`${key.padEnd(16)} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
        }
        lines.push('');
      } else lines.push(String(row));
    }
    io.out(`${lines.join('\n')}\n`);
  };
}

/**
 * Registers the admin commands. Resource modules add their own with `register(program, ctx)`
 * so the CLI grows in one place per concern.
 */
export interface CliContext {
  client: () => AdminClient;
  print: (options: { json?: boolean }) => (value: unknown) => void;
  /** Text for a person, as it is (a command's own summary). */
  out: (text: string) => void;
}

export type Register = (program: Command, ctx: CliContext) => void;
