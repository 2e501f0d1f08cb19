// The first start of an installation: an admin token and a first environment, made once.
import { generateFirstAdminToken } from '../auth/admin-token.ts';
import { createEnvironment } from '../environments/service.ts';
import { hasEnvironment, lockFirstRun } from '../environments/store.ts';
import type { Deps } from '../kernel/deps.ts';

/** Secrets made on a first start, to be printed once. */
export type FirstRun = {
  adminToken?: string;
  environment?: { environment_id: string; client_id: string; api_key: string };
};

/**
 * The first start's secrets: an admin token when there is none (and none is configured), and an
 * environment named `development` when there is no environment. Under one lock, so processes
 * starting together on an empty database make one of each, and exactly one of them gets them.
 */
export function createFirstRunSecrets(deps: Deps, options: { generateAdminToken: boolean }): Promise<FirstRun> {
  return deps.db.transaction(async (tx) => {
    await lockFirstRun(tx);
    const inTx = { ...deps, db: tx };
    const firstRun: FirstRun = {};
    const adminToken = options.generateAdminToken ? await generateFirstAdminToken(inTx) : undefined;
    if (adminToken) firstRun.adminToken = adminToken;
    if (!(await hasEnvironment(tx))) firstRun.environment = await createEnvironment(inTx, { name: 'development' });
    return firstRun;
  });
}
