import { Readable } from 'node:stream';
import { pipeline as streamPipeline } from 'node:stream/promises';
import { ApiError, type AuditLogExportDownload, type Deps, openAuditLogExportDownload } from '@atrium/routers';
import { parseQuery } from './body.ts';
import { writeHead } from './exchange.ts';
import { decodeSegment } from './path-params.ts';
import type { Call, Codec } from './pipeline.ts';
import type { Cost } from './rate-limit.ts';
import { writeError } from './render.ts';

// The export download codec: `GET /audit_logs/exports/:id/download?expires=&signature=`, the
// signed link `GET /audit_logs/exports/:id` hands out (routers/src/audit-logs/exports/service.ts
// checks it). The link is the credential (no API key); the call runs on the one pipeline (rate
// limits by address, in-flight turns), and the CSV streams part by part, never held whole.

const PREFIX = '/audit_logs/exports/';
const SUFFIX = '/download';

export interface ExportDownloadCall extends Call {
  id: string;
  expires: string | undefined;
  signature: string | undefined;
}

/** Is this an export's download path? */
export function isExportDownloadPath(pathname: string): boolean {
  if (!pathname.startsWith(PREFIX) || !pathname.endsWith(SUFFIX)) return false;
  const id = pathname.slice(PREFIX.length, -SUFFIX.length);
  return id.length > 0 && !id.includes('/');
}

const ONE_REQUEST: Cost = { requests: 1, organizationDeletes: 0 };

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export function exportDownloadCodec(deps: Deps): Codec<ExportDownloadCall, AuditLogExportDownload> {
  return {
    surface: 'api',
    decode(ex) {
      if (ex.method !== 'GET' && ex.method !== 'HEAD') {
        throw new ApiError(405, 'method_not_allowed', `${ex.method} is not allowed here.`);
      }
      const raw = ex.pathname.slice(PREFIX.length, -SUFFIX.length);
      const query = parseQuery(ex.search);
      return {
        cost: ONE_REQUEST,
        reads: undefined,
        weight: 1,
        calls: 1,
        id: decodeSegment(raw) ?? raw,
        expires: first(query.expires),
        signature: first(query.signature),
      };
    },
    dispatch: (_ex, call) => openAuditLogExportDownload(deps, call.id, call.expires, call.signature),
    async encode(ex, _call, download) {
      writeHead(ex, 200, [
        'Content-Type',
        'text/csv; charset=utf-8',
        'Content-Disposition',
        `attachment; filename="${download.filename}"`,
        'Content-Length',
        download.bytes,
        'Cache-Control',
        'private, no-store',
      ]);
      if (ex.method === 'HEAD') {
        ex.res.end();
        return;
      }
      // Part by part with backpressure; a client that leaves ends the reads.
      await streamPipeline(Readable.from(download.parts, { objectMode: false }), ex.res).catch(() => {
        if (!ex.res.writableEnded) ex.res.destroy();
      });
    },
    encodeError(ex, error, headers) {
      writeError(ex, error, headers);
    },
  };
}
