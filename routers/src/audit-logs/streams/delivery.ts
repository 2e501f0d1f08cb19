import type { AuditLogStreamType, FairTake } from '@atrium/db';
import type { Deps } from '../../kernel/deps.ts';
import type { AttemptOutcome } from '../../webhooks/deliveries.ts';
import { toAuditLogEvent } from '../service.ts';
import {
  type AuditLogStreamRow,
  leaseDueStreams,
  nextStreamBatch,
  recordStreamAttempt,
  releaseStream,
  type StreamEventRow,
} from './delivery/store.ts';
import {
  DESTINATIONS,
  type DestinationConfig,
  type DestinationCredentials,
  openStreamCredentials,
} from './destinations.ts';
import { azureSentinelRequest } from './senders/azure-sentinel.ts';
import { datadogRequest } from './senders/datadog.ts';
import { genericHttpsRequest } from './senders/generic-https.ts';
import { googleCloudStorageRequest } from './senders/google-cloud-storage.ts';
import type { Batch, OutgoingRequest } from './senders/request.ts';
import { s3Request } from './senders/s3.ts';
import { splunkRequest } from './senders/splunk.ts';

export type { AuditLogStreamRow } from './delivery/store.ts';
export type { OutgoingRequest } from './senders/request.ts';

type Sender<T extends AuditLogStreamType> = (
  config: DestinationConfig<T>,
  credentials: DestinationCredentials<T>,
  batch: Batch,
) => OutgoingRequest | Promise<OutgoingRequest>;

const SENDERS: { [T in AuditLogStreamType]: Sender<T> } = {
  GenericHttps: genericHttpsRequest,
  Datadog: datadogRequest,
  Splunk: splunkRequest,
  S3: s3Request,
  GoogleCloudStorage: googleCloudStorageRequest,
  AzureSentinel: azureSentinelRequest,
};

/** The request that delivers `batch` to the stream's destination, formatted and signed for its type. */
export async function requestFor(masterKey: Buffer, stream: AuditLogStreamRow, batch: Batch): Promise<OutgoingRequest> {
  const type = stream.type;
  const config = DESTINATIONS[type].config.parse(stream.config);
  const credentials = openStreamCredentials(masterKey, stream);
  return (SENDERS[type] as Sender<typeof type>)(config as never, credentials as never, batch);
}

/** Takes due active streams, fairly across environments, each leased until `now + leaseMs`. */
export function takeDueStreams(
  deps: Pick<Deps, 'db'>,
  now: Date,
  limit: number,
  leaseMs: number,
  fair: FairTake,
): Promise<{ streams: AuditLogStreamRow[]; cursor: string }> {
  return leaseDueStreams(deps.db, now, limit, new Date(now.getTime() + leaseMs), fair);
}

/** One batch ready to send: the request, and the events it carries (in delivery order). */
export interface PreparedBatch {
  request: OutgoingRequest;
  events: StreamEventRow[];
}

/**
 * The stream's next batch (at most `maxEvents` events after its cursor, in commit order) and the
 * request that delivers it; null when nothing is ready, after which the stream is looked at again
 * at `idleUntil`. Credentials that no longer open are recorded as a failure of the attempt.
 */
export async function prepareBatch(
  deps: Pick<Deps, 'db' | 'tokens'>,
  stream: AuditLogStreamRow,
  options: { maxEvents: number; now: Date; idleUntil: Date },
): Promise<PreparedBatch | null> {
  const events = await nextStreamBatch(deps.db, stream, options.maxEvents);
  if (events.length === 0) {
    await releaseStream(deps.db, stream, options.idleUntil);
    return null;
  }
  const request = await requestFor(deps.tokens.masterKey, stream, {
    events: events.map(toAuditLogEvent),
    now: options.now,
  });
  return { request, events };
}

/** What an attempt led to. */
export type StreamAttemptResult = 'delivered' | 'retrying' | 'error' | 'invalid';

/** The retry policy: the webhooks' backoff and budget. */
export interface RetryPolicy {
  /** The delay before attempt `attempts + 1` after `attempts` failures. */
  retryDelayMs(attempts: number): number;
  /** An event not delivered this long after it was recorded puts the stream in `error`. */
  maxAgeMs: number;
}

/** A destination's refusal of the credentials: the stream waits for the IT admin to fix them. */
const isRefusal = (statusCode: number | null) => statusCode === 401 || statusCode === 403;

/** What the attempt's failure says, without the request (its headers and URL may carry secrets). */
function failureMessage(outcome: AttemptOutcome): string {
  if (outcome.error) return outcome.error.slice(0, 500);
  return `the destination answered HTTP ${outcome.statusCode}`;
}

/**
 * Records the attempt's consequence. Delivered: the cursor moves to the batch's last event and the
 * attempt state is cleared; the stream is due again at once. Refused (401/403): `invalid`. Else a
 * retry with backoff, until the oldest event of the batch is `maxAgeMs` old: then `error`. The
 * cursor moves only on success, so nothing is skipped; a retry may deliver a batch again
 * (at-least-once).
 */
export async function settleBatch(
  deps: Pick<Deps, 'db'>,
  stream: AuditLogStreamRow,
  events: StreamEventRow[],
  outcome: AttemptOutcome,
  attemptedAt: Date,
  policy: RetryPolicy,
): Promise<StreamAttemptResult> {
  if (outcome.ok) {
    await recordStreamAttempt(
      deps.db,
      stream,
      {
        deliveredThrough: (events.at(-1) as StreamEventRow).id,
        attempts: 0,
        state: 'active',
        nextAttemptAt: attemptedAt,
        lastAttemptAt: attemptedAt,
        lastStatusCode: outcome.statusCode,
        lastError: null,
      },
      attemptedAt,
    );
    return 'delivered';
  }
  const attempts = stream.attempts + 1;
  const oldest = (events[0] as StreamEventRow).createdAt.getTime();
  const retryAt = new Date(attemptedAt.getTime() + policy.retryDelayMs(attempts));
  const result: StreamAttemptResult = isRefusal(outcome.statusCode)
    ? 'invalid'
    : retryAt.getTime() > oldest + policy.maxAgeMs
      ? 'error'
      : 'retrying';
  await recordStreamAttempt(
    deps.db,
    stream,
    {
      attempts,
      state: result === 'retrying' ? 'active' : result,
      nextAttemptAt: result === 'retrying' ? retryAt : null,
      lastAttemptAt: attemptedAt,
      lastStatusCode: outcome.statusCode,
      lastError: failureMessage(outcome),
    },
    attemptedAt,
  );
  return result;
}
