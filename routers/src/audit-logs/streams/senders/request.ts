import type { AuditLogEvent } from '../../schemas.ts';

/**
 * One HTTP request a sender asks for: the worker sends it through the webhooks' guarded client
 * (address rule, timeout, response cap). Senders only format and sign; they never connect.
 */
export interface OutgoingRequest {
  method: 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What a sender formats: the batch in delivery order, as `GET` would show each event. */
export interface Batch {
  events: AuditLogEvent[];
  /** The attempt's time (signatures, object keys). */
  now: Date;
}

/** `base` without a trailing slash, then `path`. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}
