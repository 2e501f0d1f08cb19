import { runCli } from '@atrium/server';

/**
 * Runs the admin CLI in-process with `env` (ATRIUM_URL, ATRIUM_ADMIN_TOKEN), capturing what it
 * prints; `json()` parses a `--json` run's output, and a failed run says why (its exit code and
 * stderr) rather than "Unexpected end of JSON input".
 */
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
  const json = () => {
    if (code !== 0) throw new Error(`atrium ${argv.join(' ')} exited ${code}: ${err}`);
    return JSON.parse(out);
  };
  return { code, out, err, json };
}
