import type { DestinationConfig, DestinationCredentials } from '../destinations.ts';
import { type Batch, joinUrl, type OutgoingRequest } from './request.ts';

/**
 * Datadog's logs intake (`POST <intake>/api/v2/logs`, `DD-API-KEY`): one log per event, whose
 * `message` is the event's JSON; the intake is `https://http-intake.logs.<site>` unless `url` is set.
 */
export function datadogRequest(
  config: DestinationConfig<'Datadog'>,
  credentials: DestinationCredentials<'Datadog'>,
  batch: Batch,
): OutgoingRequest {
  const intake = config.url ?? `https://http-intake.logs.${config.site}`;
  const logs = batch.events.map((event) => ({
    ddsource: 'atrium',
    service: 'atrium-audit-logs',
    ddtags: `organization_id:${event.organization_id},action:${event.action}`,
    timestamp: Date.parse(event.occurred_at),
    message: JSON.stringify(event),
  }));
  return {
    method: 'POST',
    url: joinUrl(intake, '/api/v2/logs'),
    headers: { 'Content-Type': 'application/json', 'DD-API-KEY': credentials.api_key },
    body: JSON.stringify(logs),
  };
}
