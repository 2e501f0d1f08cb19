import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/** A frontend's whole use of the typed client: the router's type only, and the browser links. */
const FRONTEND = `
import type { AppRouter } from '@atrium/routers';
import { createTRPCClient, httpBatchLink } from '@trpc/client';

export const atrium = createTRPCClient<AppRouter>({
  links: [httpBatchLink({ url: 'https://atrium.example/trpc', headers: () => ({ Authorization: 'Bearer t' }) })],
});
export const me = () => atrium.client.me.query();
`;

describe('the typed tRPC client in a browser bundle', () => {
  it('builds for the browser without any of the server (no postgres, drizzle-orm or node: imports)', async () => {
    const result = await build({
      stdin: { contents: FRONTEND, loader: 'ts', resolveDir: dirname(fileURLToPath(import.meta.url)) },
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    const code = result.outputFiles[0]?.text ?? '';
    expect(code).toContain('httpBatchLink');
    expect(code).not.toMatch(/postgres|drizzle-orm|from ["']node:|require\(["']node:/);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((path) => path.includes('@trpc/client'))).toBe(true);
    expect(
      inputs.filter((path) => /(^|\/)(routers|db|rest-facade|server)\/src\/|postgres|drizzle|@electric-sql/.test(path)),
    ).toEqual([]);
  });
});
