import { WorkOS } from '@workos-inc/node';
import type { TestEnvironment } from './world.ts';

/** The official WorkOS Node SDK pointed at the worker's server with the environment's key. */
export function sdkFor(env: TestEnvironment): WorkOS {
  const url = new URL(env.world.url);
  return new WorkOS(env.apiKey, {
    apiHostname: url.hostname,
    port: Number(url.port),
    https: false,
    clientId: env.clientId,
  });
}
