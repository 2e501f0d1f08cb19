import { runCli } from '@atrium/server';

/** Runs the admin CLI in-process with `env` (ATRIUM_URL, ATRIUM_ADMIN_TOKEN), capturing what it prints. */
export async function runAdminCli(argv: string[], env: Record<string, string>) {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
    env,
  });
  return { code, out, err };
}
