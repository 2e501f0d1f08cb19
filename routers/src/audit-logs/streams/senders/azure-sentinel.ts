import { createHmac } from 'node:crypto';
import type { DestinationConfig, DestinationCredentials } from '../destinations.ts';
import { type Batch, joinUrl, type OutgoingRequest } from './request.ts';

const API_PATH = '/api/logs';

/**
 * Azure Monitor's Data Collector API's `Authorization: SharedKey <workspace>:<signature>`, the
 * signature being base64(HMAC-SHA256(base64-decoded key, "POST\n<length>\napplication/json\n
 * x-ms-date:<date>\n/api/logs")), as Microsoft documents it.
 */
export function sharedKeySignature(sharedKey: string, contentLength: number, date: string): string {
  const toSign = `POST\n${contentLength}\napplication/json\nx-ms-date:${date}\n${API_PATH}`;
  return createHmac('sha256', Buffer.from(sharedKey, 'base64')).update(toSign, 'utf8').digest('base64');
}

/**
 * Azure Sentinel (a Log Analytics workspace): one POST of the batch as a JSON array to
 * `https://<workspace_id>.ods.opinsights.azure.com/api/logs?api-version=2016-04-01` (`url` replaces
 * the base), `Log-Type` the configured type (`AtriumAuditLogs` by default), `occurred_at` as the
 * time-generated field.
 */
export function azureSentinelRequest(
  config: DestinationConfig<'AzureSentinel'>,
  credentials: DestinationCredentials<'AzureSentinel'>,
  batch: Batch,
): OutgoingRequest {
  const base = config.url ?? `https://${config.workspace_id}.ods.opinsights.azure.com`;
  const body = JSON.stringify(batch.events);
  const date = batch.now.toUTCString();
  const signature = sharedKeySignature(credentials.shared_key, Buffer.byteLength(body), date);
  return {
    method: 'POST',
    url: `${joinUrl(base, API_PATH)}?api-version=2016-04-01`,
    headers: {
      'Content-Type': 'application/json',
      'Log-Type': config.log_type ?? 'AtriumAuditLogs',
      'x-ms-date': date,
      'time-generated-field': 'occurred_at',
      Authorization: `SharedKey ${config.workspace_id}:${signature}`,
    },
    body,
  };
}
