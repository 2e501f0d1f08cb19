import type { AuditLogStreamType } from '@atrium/db';
import { z } from 'zod';
import { seal, unseal } from '../../signing/material.ts';

/**
 * What each log stream destination needs (issue #38), split as the table stores it: `config` is
 * public (shown back to the IT admin), `credentials` is secret (sealed under the master key,
 * never shown again, never in an event or an error). Upstream's destinations, with one addition
 * where a self-hosted deployment needs it: an `endpoint` for S3-compatible storage.
 *
 * The portal's `log_streams` form writes these (routers/src/audit-logs/streams/service.ts) and the
 * delivery worker reads them (routers/src/audit-logs/streams/delivery.ts).
 */
const HttpsUrl = z.url({ protocol: /^https?$/ }).max(2048);
const Region = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9-]+$/, 'a region is lower-case letters, digits and -');
const Bucket = z
  .string()
  .min(3)
  .max(63)
  .regex(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/, 'a bucket name is lower-case letters, digits, . and -');
const Prefix = z.string().max(512).optional();

/** Datadog's sites (its intake is `https://http-intake.logs.<site>/api/v2/logs`). */
export const DATADOG_SITES = [
  'datadoghq.com',
  'us3.datadoghq.com',
  'us5.datadoghq.com',
  'datadoghq.eu',
  'ap1.datadoghq.com',
  'ddog-gov.com',
] as const;

export const DESTINATIONS = {
  /** A POST of a JSON array of events to `url`, with the headers given (an Authorization, say). */
  GenericHttps: {
    config: z.object({ url: HttpsUrl }),
    credentials: z.object({ headers: z.record(z.string().min(1).max(256), z.string().max(4096)).optional() }),
  },
  /** Datadog's logs intake: one log per event, `DD-API-KEY`. `url` overrides the site's intake. */
  Datadog: {
    config: z.object({ site: z.enum(DATADOG_SITES), url: HttpsUrl.optional() }),
    credentials: z.object({ api_key: z.string().min(1).max(256) }),
  },
  /** Splunk's HTTP Event Collector: `POST <url>/services/collector/event`, `Authorization: Splunk <token>`. */
  Splunk: {
    config: z.object({ url: HttpsUrl, index: z.string().max(256).optional() }),
    credentials: z.object({ token: z.string().min(1).max(256) }),
  },
  /** An object per batch of events (JSON lines) in `bucket`, signed with AWS Signature V4. */
  S3: {
    config: z.object({ bucket: Bucket, region: Region, prefix: Prefix, endpoint: HttpsUrl.optional() }),
    credentials: z.object({
      access_key_id: z.string().min(1).max(128),
      secret_access_key: z.string().min(1).max(256),
    }),
  },
  /** As S3, through Cloud Storage's XML API with an HMAC key (`endpoint` defaults to storage.googleapis.com). */
  GoogleCloudStorage: {
    config: z.object({ bucket: Bucket, prefix: Prefix, endpoint: HttpsUrl.optional() }),
    credentials: z.object({
      access_key_id: z.string().min(1).max(128),
      secret_access_key: z.string().min(1).max(256),
    }),
  },
  /**
   * Azure Monitor's Data Collector API (the Log Analytics workspace behind Sentinel): SharedKey
   * authorization with the workspace's key; `url` overrides `https://<workspace_id>.ods.opinsights.azure.com`.
   */
  AzureSentinel: {
    config: z.object({
      workspace_id: z.string().min(1).max(64),
      log_type: z
        .string()
        .min(1)
        .max(100)
        .regex(/^[A-Za-z0-9_]+$/)
        .optional(),
      url: HttpsUrl.optional(),
    }),
    credentials: z.object({ shared_key: z.string().min(1).max(256) }),
  },
} as const satisfies Record<AuditLogStreamType, { config: z.ZodType; credentials: z.ZodType }>;

export type DestinationConfig<T extends AuditLogStreamType> = z.infer<(typeof DESTINATIONS)[T]['config']>;
export type DestinationCredentials<T extends AuditLogStreamType> = z.infer<(typeof DESTINATIONS)[T]['credentials']>;

/** A stream's secrets at rest: JSON sealed under the master key, bound to the stream's id. */
export function sealStreamCredentials(masterKey: Buffer, streamId: string, credentials: object): string {
  return seal(masterKey, streamId, Buffer.from(JSON.stringify(credentials), 'utf8'));
}

/** The secrets of a stored stream, as its type's `credentials` schema reads them. */
export function openStreamCredentials<T extends AuditLogStreamType>(
  masterKey: Buffer,
  stream: { id: string; type: T; credentials: string | null },
): DestinationCredentials<T> {
  if (stream.credentials === null) return DESTINATIONS[stream.type].credentials.parse({}) as DestinationCredentials<T>;
  const json = unseal(masterKey, stream.id, stream.credentials, `The credentials of log stream ${stream.id}`);
  return DESTINATIONS[stream.type].credentials.parse(JSON.parse(json.toString('utf8'))) as DestinationCredentials<T>;
}
