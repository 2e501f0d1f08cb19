import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AppOptions, type AtriumApp, createApp } from '@atrium/rest-facade';
import type { Deps } from '@atrium/routers';

/** A facade of its own (own limits, own metrics, own logger) over the worker's database. */
export async function startOwnApp(deps: Deps, options: Partial<AppOptions> = {}) {
  const app: AtriumApp = createApp(deps, { baseUrl: 'http://127.0.0.1', ...options });
  const server = createServer(app.handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    app,
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let n = 0;
/** A syntactically valid admin token, unique per call. */
export function adminTokenFor(label: string): string {
  n += 1;
  return `atrium_admin_${`${label}${process.pid}x${n}`
    .replace(/[^0-9A-Za-z]/g, '')
    .padEnd(40, 'Z')
    .slice(0, 40)}`;
}
