// The contract's per-directory quotas: 100,000 users and 10,000 groups per directory (each
// configurable). An exact count per create is O(n), and one counter on the directory row would
// make every create of a directory wait on the one before it, so the counter is split into
// QUOTA_SHARDS rows, each allowed its share of the quota: a create adds one to a random shard
// below its share (trying the others only when that one is full, i.e. near the limit), a delete
// takes one from a shard above zero. A shard's row stays locked until its transaction ends, so
// two creates never both take a shard's last place, and the shares add up to the quota: however
// many creates race, a directory never holds more than its quota. O(1) statements per write
// (at most QUOTA_SHARDS near the limit), and two concurrent creates wait on one another only when
// they drew the same shard.
import type { DirectoryQuotaKind } from '@atrium/db';
import type { Scope } from '../kernel/scope.ts';
import { type QuotaName, quotaError, quotaLimit } from '../quotas.ts';
import { type QuotaPlace, releaseQuotaShard, takeQuotaShard } from './store.ts';

/** How many rows a directory's counter of users (of groups) is split into. */
export const QUOTA_SHARDS = 16;

const QUOTA_OF: Record<DirectoryQuotaKind, QuotaName> = {
  users: 'directoryUsersPerDirectory',
  groups: 'directoryGroupsPerDirectory',
};

/** The places shard `shard` of `shards` may hold of `limit`: an even share, the remainder to the first. */
const shareOf = (limit: number, shards: number, shard: number) =>
  Math.floor(limit / shards) + (shard < limit % shards ? 1 : 0);

const randomShard = (shards: number) => Math.floor(Math.random() * shards);

/**
 * The shard a write tries first for one more user (group), when it adds its place in its own
 * statement (store.ts `insertDirectoryUsers`); not placed there, `takeDirectoryPlace(…, place)`
 * goes on from it (its first use inserts it).
 */
export function drawDirectoryPlace(scope: Scope, kind: DirectoryQuotaKind): QuotaPlace {
  const limit = quotaLimit(scope.deps, QUOTA_OF[kind]);
  const shards = Math.min(QUOTA_SHARDS, limit);
  if (shards < 1) return { kind, shard: 0, cap: 0 };
  const shard = randomShard(shards);
  return { kind, shard, cap: shareOf(limit, shards, shard) };
}

/**
 * Takes a place for one more user (group) of the directory in the caller's transaction, or
 * refuses with the quota's `quota_exceeded` (the SCIM surface answers it as 403). A quota lowered
 * below what a directory holds is enforced per shard: shards over their new share take no more.
 * `count` places at once (a batch of creates, sync.ts) are taken on one shard, or refused: the
 * batch's creates are then made one by one, each refused or placed exactly.
 */
export async function takeDirectoryPlace(
  tx: Scope['db'],
  scope: Scope,
  directory: { id: string },
  kind: DirectoryQuotaKind,
  tried?: QuotaPlace,
  count = 1,
): Promise<void> {
  const limit = quotaLimit(scope.deps, QUOTA_OF[kind]);
  // Never more shards than places, so that each shard has at least one.
  const shards = Math.min(QUOTA_SHARDS, limit);
  // After a `drawDirectoryPlace` that did not place: from its shard on, which may be absent still.
  const start = tried && tried.shard < shards ? tried.shard : randomShard(Math.max(1, shards));
  for (let i = 0; i < shards; i++) {
    const shard = (start + i) % shards;
    const cap = shareOf(limit, shards, shard);
    const triedUpdate = i === 0 && tried !== undefined;
    if (await takeQuotaShard(tx, scope.env.id, directory.id, kind, shard, cap, triedUpdate, count)) return;
  }
  throw quotaError(scope.deps, QUOTA_OF[kind]);
}

/** Frees the place of a user (group) the directory no longer holds, in the caller's transaction. */
export async function freeDirectoryPlace(
  tx: Scope['db'],
  directory: { id: string },
  kind: DirectoryQuotaKind,
): Promise<void> {
  const start = randomShard(QUOTA_SHARDS);
  for (let i = 0; i < QUOTA_SHARDS; i++) {
    if (await releaseQuotaShard(tx, directory.id, kind, (start + i) % QUOTA_SHARDS)) return;
  }
}
