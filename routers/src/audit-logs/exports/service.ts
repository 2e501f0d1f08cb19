import { createHmac, timingSafeEqual } from 'node:crypto';
import { type AuditLogExportFilters, newId } from '@atrium/db';
import { iso } from '../../common/schemas.ts';
import type { Deps } from '../../kernel/deps.ts';
import { ApiError, notFound } from '../../kernel/errors.ts';
import type { Scope } from '../../kernel/scope.ts';
import { inBatches } from '../../lib/batches.ts';
import { lazy } from '../../lib/lazy.ts';
import { auditLogsRetentionOf } from '../../organizations/store.ts';
import { deriveKey } from '../../signing/material.ts';
import type { AuditLogExport, CreateAuditLogExportInput } from './schemas.ts';
import {
  type AuditLogEventRow,
  type AuditLogExportRow,
  countPendingExports,
  deleteExportParts,
  deleteFinishedExports,
  findAuditLogExport,
  findAuditLogExportById,
  insertAuditLogExport,
  insertExportPart,
  insertSyntheticAuditLogEvents,
  leasePendingExport,
  markExportFailed,
  markExportReady,
  pageOfExportEvents,
  readExportPart,
} from './store.ts';

const DAY_MS = 86_400_000;
/** csv-stringify loads with the first export built. */
const loadCsvStringify = lazy(() => import('csv-stringify/sync'));
/** How long a download link lives (upstream: 10 minutes; each GET of the export makes a fresh one). */
export const EXPORT_URL_TTL_MS = 10 * 60_000;
/** The size a CSV part is flushed at, after a page (a part is one bytea row: this plus at most a page). */
export const EXPORT_PART_BYTES = 1024 * 1024;
/** Events read per keyset page while building. */
const PAGE_ROWS = 1000;
/** How long a build holds its lease before another worker may take the export over. */
export const EXPORT_LEASE_MS = 5 * 60_000;
/** Builds begun before an export is given up as `error`. */
export const EXPORT_MAX_ATTEMPTS = 3;
/**
 * How long a finished export (`ready` or `error`) can be read after it finished: each GET signs a
 * fresh link (upstream: "refetching the export will regenerate the URL"), so the link's 10 minutes
 * bound nothing; past this the export is 404, and the retention sweep deletes it and its parts
 * once the last link it could have signed has expired too (`EXPORT_URL_TTL_MS` later).
 */
export const EXPORT_KEEP_MS = DAY_MS;

/** The CSV's columns, in order (docs/audit-logs.md, "Exports", says why these). */
export const EXPORT_CSV_COLUMNS = [
  'id',
  'action',
  'occurred_at',
  'actor_id',
  'actor_type',
  'actor_name',
  'actor_metadata',
  'targets',
  'context_location',
  'context_user_agent',
  'metadata',
  'version',
] as const;

/** Upstream's refusal of a range (start after end, or older than the organization keeps events). */
const invalidRange = (message: string) => new ApiError(400, 'invalid_audit_log_export_range_date', message);

const exportNotFound = (id: string) => new ApiError(404, 'entity_not_found', `Audit Log Export not found: '${id}'.`);

/** A finished export past `EXPORT_KEEP_MS`: answered as gone (404), even before the sweep deletes it. */
const isExpired = (row: AuditLogExportRow, now: Date) =>
  row.state !== 'pending' && row.updatedAt.getTime() + EXPORT_KEEP_MS <= now.getTime();

/** The download path of an export (the signed link's path, below the public base URL). */
export const exportDownloadPath = (id: string) => `/audit_logs/exports/${encodeURIComponent(id)}/download`;

function linkKey(deps: Deps): Buffer {
  return deriveKey(deps.tokens.masterKey, 'audit-log-export-download');
}

function signatureOf(deps: Deps, id: string, expires: number): Buffer {
  return createHmac('sha256', linkKey(deps)).update(`${id}\n${expires}`).digest();
}

/** A fresh signed link to a ready export's CSV, valid `EXPORT_URL_TTL_MS` from now. */
export function signedExportUrl(deps: Deps, id: string, now: Date): string {
  const expires = Math.floor((now.getTime() + EXPORT_URL_TTL_MS) / 1000);
  const signature = signatureOf(deps, id, expires).toString('base64url');
  const base = deps.tokens.issuer.replace(/\/+$/, '');
  return `${base}${exportDownloadPath(id)}?expires=${expires}&signature=${signature}`;
}

/** The single place that turns an export row into its wire shape (`url` only when ready: a fresh link). */
export function toAuditLogExport(deps: Deps, row: AuditLogExportRow, now: Date): AuditLogExport {
  const out: AuditLogExport = {
    object: 'audit_log_export',
    id: row.id,
    state: row.state,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
  if (row.state === 'ready') out.url = signedExportUrl(deps, row.id, now);
  return out;
}

/**
 * `POST /audit_logs/exports`: a pending export the worker builds. Refused, storing nothing: an
 * unknown organization (404), a range whose start is after its end or older than the
 * organization's retention (400 `invalid_audit_log_export_range_date`).
 */
export async function createAuditLogExport(scope: Scope, input: CreateAuditLogExportInput): Promise<AuditLogExport> {
  const now = scope.now();
  const days = await auditLogsRetentionOf(scope.db, scope.env.id, input.organization_id);
  if (days === undefined) throw notFound('organization', input.organization_id);
  const start = new Date(input.range_start);
  const end = new Date(input.range_end);
  if (start.getTime() > end.getTime()) throw invalidRange('Invalid date range: range_start is after range_end.');
  if (start.getTime() < now.getTime() - days * DAY_MS) {
    throw invalidRange(`Invalid date range: range_start is older than the organization's retention (${days} days).`);
  }
  const filters: AuditLogExportFilters = {};
  const names = [...(input.actor_names ?? []), ...(input.actors ?? [])];
  if (input.actions?.length) filters.actions = input.actions;
  if (names.length) filters.actor_names = names;
  if (input.actor_ids?.length) filters.actor_ids = input.actor_ids;
  if (input.targets?.length) filters.targets = input.targets;
  const row = await insertAuditLogExport(scope.db, {
    id: newId('auditLogExport'),
    environmentId: scope.env.id,
    organizationId: input.organization_id,
    rangeStart: start,
    rangeEnd: end,
    filters,
    createdAt: now,
    updatedAt: now,
  });
  return toAuditLogExport(scope.deps, row, now);
}

/** `GET /audit_logs/exports/{id}`: the export of the environment (404 otherwise), a fresh link when ready. */
export async function getAuditLogExport(scope: Scope, id: string): Promise<AuditLogExport> {
  const now = scope.now();
  const row = await findAuditLogExport(scope.db, scope.env.id, id);
  if (!row || isExpired(row, now)) throw exportNotFound(id);
  return toAuditLogExport(scope.deps, row, now);
}

/** How many exports the portal's audit_logs page may have pending at once for its organization. */
export const PORTAL_PENDING_EXPORTS = 3;

/**
 * The portal page's export: `createAuditLogExport` for the session's organization, refused with 429
 * `too_many_pending_exports` while it already has `PORTAL_PENDING_EXPORTS` pending, so a session
 * cannot queue builds without end (the count is not locked: concurrent clicks may pass it by a few).
 */
export async function createPortalExport(scope: Scope, input: CreateAuditLogExportInput): Promise<AuditLogExport> {
  const pending = await countPendingExports(scope.db, scope.env.id, input.organization_id, PORTAL_PENDING_EXPORTS);
  if (pending >= PORTAL_PENDING_EXPORTS) {
    throw new ApiError(
      429,
      'too_many_pending_exports',
      `At most ${PORTAL_PENDING_EXPORTS} exports may be in preparation at once: wait for one to be ready.`,
    );
  }
  return createAuditLogExport(scope, input);
}

/** An export of one organization of the environment (the portal's audit_logs page): another's is 404. */
export async function getOrganizationAuditLogExport(
  scope: Scope,
  organizationId: string,
  id: string,
): Promise<AuditLogExport> {
  const now = scope.now();
  const row = await findAuditLogExport(scope.db, scope.env.id, id);
  if (row?.organizationId !== organizationId || isExpired(row, now)) throw exportNotFound(id);
  return toAuditLogExport(scope.deps, row, now);
}

/**
 * The retention sweep's part: finished exports past `EXPORT_KEEP_MS` plus the last link's life
 * (`EXPORT_URL_TTL_MS`), with their CSV parts, `batchSize` exports a statement; how many went.
 */
export async function purgeExpiredAuditLogExports(deps: Deps, batchSize = 100): Promise<number> {
  const before = new Date(deps.now().getTime() - EXPORT_KEEP_MS - EXPORT_URL_TTL_MS);
  return inBatches(batchSize, (size) => deleteFinishedExports(deps.db, before, size));
}

/** One event as a CSV record, in `EXPORT_CSV_COLUMNS` order. */
function recordOf(event: AuditLogEventRow): Array<string | number> {
  return [
    event.id,
    event.action,
    iso(event.occurredAt),
    event.actor.id,
    event.actor.type,
    event.actor.name ?? '',
    event.actor.metadata ? JSON.stringify(event.actor.metadata) : '',
    JSON.stringify(event.targets),
    event.context.location,
    event.context.user_agent ?? '',
    event.metadata ? JSON.stringify(event.metadata) : '',
    event.version,
  ];
}

/**
 * Builds one leased export: reads its events by keyset pages (never all at once), writes each
 * page as CSV rows, and stores the CSV in parts of about `EXPORT_PART_BYTES`. Snapshot: the
 * events recorded up to the build's start. Marks it ready (if the build still holds the lease).
 */
async function buildExport(
  deps: Deps,
  row: AuditLogExportRow,
  sizes: { partBytes: number; pageRows: number },
): Promise<void> {
  const { stringify } = await loadCsvStringify();
  const { partBytes, pageRows } = sizes;
  const snapshot = deps.now();
  const attempt = row.attempts;
  let pending: Buffer[] = [Buffer.from(stringify([[...EXPORT_CSV_COLUMNS]]))];
  let pendingBytes = pending[0]?.length ?? 0;
  let seq = 0;
  let bytes = 0;
  let rows = 0;
  const flush = async () => {
    const data = Buffer.concat(pending);
    await insertExportPart(deps.db, row, attempt, seq++, data);
    bytes += data.length;
    pending = [];
    pendingBytes = 0;
  };
  let after: { occurredAt: Date; id: string } | undefined;
  for (;;) {
    const page = await pageOfExportEvents(deps.db, row, snapshot, after, pageRows);
    if (page.length > 0) {
      const chunk = Buffer.from(stringify(page.map(recordOf)));
      pending.push(chunk);
      pendingBytes += chunk.length;
      rows += page.length;
      const last = page[page.length - 1] as AuditLogEventRow;
      after = { occurredAt: last.occurredAt, id: last.id };
    }
    if (pendingBytes >= partBytes) await flush();
    if (page.length < pageRows) break;
  }
  if (pendingBytes > 0 || seq === 0) await flush();
  await markExportReady(deps.db, row.id, attempt, { rows, bytes, parts: seq }, deps.now());
}

/**
 * The export worker's tick: leases the next pending export and builds it; a build that fails
 * frees the export for another attempt, the last one marks it `error` with the reason. True
 * when it built (or tried) one, so the loop looks again at once.
 */
export async function buildNextAuditLogExport(
  deps: Deps,
  options: { leaseMs?: number; partBytes?: number; pageRows?: number } = {},
): Promise<boolean> {
  const { leaseMs = EXPORT_LEASE_MS, partBytes = EXPORT_PART_BYTES, pageRows = PAGE_ROWS } = options;
  const now = deps.now();
  const row = await leasePendingExport(deps.db, now, new Date(now.getTime() + leaseMs));
  if (!row) return false;
  try {
    if (row.attempts > 1) await deleteExportParts(deps.db, row.id);
    await buildExport(deps, row, { partBytes, pageRows });
  } catch (error) {
    deps.log.warn({ err: error, export_id: row.id, attempt: row.attempts }, 'audit log export build failed');
    const final = row.attempts >= EXPORT_MAX_ATTEMPTS;
    await markExportFailed(deps.db, row.id, row.attempts, final, 'The export could not be built.', deps.now());
  }
  return true;
}

/** What a download streams: its file name, its size and its parts, one read at a time. */
export interface AuditLogExportDownload {
  filename: string;
  bytes: number;
  parts: AsyncIterable<Buffer>;
}

const forbiddenLink = () =>
  new ApiError(403, 'invalid_signature', 'This download link is not valid: ask for the export again for a fresh one.');

/**
 * `GET /audit_logs/exports/{id}/download?expires=&signature=`: the link is the credential. A
 * signature that does not match the id and expiry is 403 `invalid_signature`; a link past its
 * expiry is 403 `link_expired`; an export that is gone or not ready is 404.
 */
export async function openAuditLogExportDownload(
  deps: Deps,
  id: string,
  expires: string | undefined,
  signature: string | undefined,
): Promise<AuditLogExportDownload> {
  if (!expires || !/^\d{1,12}$/.test(expires) || !signature || !/^[\w-]{43}$/.test(signature)) throw forbiddenLink();
  const expected = signatureOf(deps, id, Number(expires));
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw forbiddenLink();
  if (Number(expires) * 1000 < deps.now().getTime()) {
    throw new ApiError(
      403,
      'link_expired',
      'This download link has expired: ask for the export again for a fresh one.',
    );
  }
  const row = await findAuditLogExportById(deps.db, id);
  if (row?.state !== 'ready') throw exportNotFound(id);
  const parts = row.partCount ?? 0;
  return {
    filename: `${row.id}.csv`,
    bytes: row.byteCount ?? 0,
    parts: (async function* () {
      for (let seq = 0; seq < parts; seq++) {
        const part = await readExportPart(deps.db, row, seq);
        if (!part) throw new Error(`audit log export ${row.id} is missing part ${seq}`);
        yield part;
      }
    })(),
  };
}

/** The bench's seed of `count` events of an organization, one statement (bench/audit-export.ts). */
export function seedAuditLogEvents(scope: Scope, organizationId: string, count: number): Promise<void> {
  return insertSyntheticAuditLogEvents(scope.db, scope.env.id, organizationId, count, scope.now());
}
