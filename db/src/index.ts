export * from './client.ts';
export { countUpTo, lockEnvironment } from './counting.ts';
export { DataDirInUseError, LOCK_FILE } from './data-dir.ts';
export { claimRoundRobin, environmentsWith, type FairTake, interleaveByEnvironment, LAST_ENVIRONMENT } from './fair.ts';
export { ID_PREFIXES, type IdKind, newId, ulidOf } from './ids.ts';
export { equalsLiteral } from './literal.ts';
export * from './paginate.ts';
export * from './schema/index.ts';
export * as schema from './schema/index.ts';
