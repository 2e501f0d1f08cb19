import type { DestinationConfig, DestinationCredentials } from '../destinations.ts';
import type { Batch, OutgoingRequest } from './request.ts';

/** Headers the sender sets itself: a configured header never replaces them. */
const RESERVED = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection']);

/** Generic HTTPS: one POST of the batch as a JSON array, with the configured headers. */
export function genericHttpsRequest(
  config: DestinationConfig<'GenericHttps'>,
  credentials: DestinationCredentials<'GenericHttps'>,
  batch: Batch,
): OutgoingRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(credentials.headers ?? {})) {
    if (!RESERVED.has(name.toLowerCase())) headers[name] = value;
  }
  headers['Content-Type'] = 'application/json';
  return { method: 'POST', url: config.url, headers, body: JSON.stringify(batch.events) };
}
