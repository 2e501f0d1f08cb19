import type { DestinationConfig, DestinationCredentials } from '../destinations.ts';
import { type Batch, joinUrl, type OutgoingRequest } from './request.ts';

/**
 * Splunk's HTTP Event Collector (`POST <url>/services/collector/event`, `Authorization: Splunk
 * <token>`): one `{time, event, sourcetype, index?}` per event, newline-separated (HEC's batch form);
 * `time` is the event's `occurred_at` in epoch seconds.
 */
export function splunkRequest(
  config: DestinationConfig<'Splunk'>,
  credentials: DestinationCredentials<'Splunk'>,
  batch: Batch,
): OutgoingRequest {
  const lines = batch.events.map((event) =>
    JSON.stringify({
      time: Date.parse(event.occurred_at) / 1000,
      event,
      sourcetype: 'atrium:audit_log_event',
      ...(config.index ? { index: config.index } : {}),
    }),
  );
  return {
    method: 'POST',
    url: joinUrl(config.url, '/services/collector/event'),
    headers: { 'Content-Type': 'application/json', Authorization: `Splunk ${credentials.token}` },
    body: lines.join('\n'),
  };
}
