import { lazy } from '../../../lib/lazy.ts';
import type { Batch, OutgoingRequest } from './request.ts';

/** Where an object store is and how to sign for it (S3 and Cloud Storage's XML API alike). */
export interface ObjectStore {
  /** `https://host[:port][/path]` for path-style addressing (`<endpoint>/<bucket>/<key>`). */
  endpoint: string;
  bucket: string;
  region: string;
  prefix?: string | undefined;
  accessKeyId: string;
  secretAccessKey: string;
}

/** aws4 loads with the first object-store delivery. */
const loadAws4 = lazy(() => import('aws4'));

const pad = (n: number) => String(n).padStart(2, '0');

/** `<prefix>/<yyyy>/<mm>/<dd>/<first-id>-<last-id>.jsonl`, dated by the attempt (UTC). */
export function objectKey(prefix: string | undefined, batch: Batch): string {
  const first = batch.events[0]?.id ?? 'empty';
  const last = batch.events.at(-1)?.id ?? 'empty';
  const d = batch.now;
  const path = `${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/${first}-${last}.jsonl`;
  const base = (prefix ?? '').replace(/^\/+|\/+$/g, '');
  return base ? `${base}/${path}` : path;
}

/**
 * One PUT of the batch as JSON lines, signed with AWS Signature V4 (the `aws4` library) over the
 * body's SHA-256, path-style. Delivering a batch again writes the same key (same first and last
 * id) on the same day, so a retry replaces rather than duplicates.
 */
export async function putObjectRequest(store: ObjectStore, batch: Batch): Promise<OutgoingRequest> {
  const { default: aws4 } = await loadAws4();
  const endpoint = new URL(store.endpoint);
  const base = endpoint.pathname.replace(/\/+$/, '');
  const key = objectKey(store.prefix, batch)
    .split('/')
    .map((part) => encodeURIComponent(part))
    .join('/');
  const path = `${base}/${store.bucket}/${key}`;
  const body = `${batch.events.map((event) => JSON.stringify(event)).join('\n')}\n`;
  const amzDate = batch.now.toISOString().replace(/[:-]|\.\d{3}/g, '');
  const signed = aws4.sign(
    {
      host: endpoint.host,
      path,
      method: 'PUT',
      service: 's3',
      region: store.region,
      headers: { 'Content-Type': 'application/x-ndjson', 'X-Amz-Date': amzDate },
      body,
    },
    { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
  );
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers ?? {})) {
    if (name.toLowerCase() !== 'host' && name.toLowerCase() !== 'content-length') headers[name] = String(value);
  }
  return { method: 'PUT', url: `${endpoint.protocol}//${endpoint.host}${path}`, headers, body };
}
