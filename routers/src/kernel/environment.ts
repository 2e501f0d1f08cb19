// The caller's environment as a credential resolves it: below the deps (whose caches hold it) and
// the scope (which carries it), so neither imports the other for it.
import type { FeatureFlags } from '@atrium/db';

/** What an authenticated request knows about its environment. */
export interface EnvironmentInfo {
  id: string;
  name: string;
  clientId: string;
  flags: FeatureFlags;
}
