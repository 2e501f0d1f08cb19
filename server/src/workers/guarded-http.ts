import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { type AttemptOutcome, hostOf, isPublicAddress, parseWebhookUrl, publicOnlyLookup } from '@atrium/routers';

export interface GuardedRequest {
  method: 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface GuardOptions {
  /** The whole request, response included. */
  timeoutMs: number;
  /** Connect to private, loopback and link-local addresses (`WEBHOOKS_ALLOW_PRIVATE`). */
  allowPrivate: boolean;
  /** Extra trusted certificate authorities (PEM): a test's self-signed receiver. */
  ca?: string | undefined;
  /** How much of a response body is read before the connection is dropped (default 64 KiB). */
  maxResponseBytes?: number;
}

const PRIVATE = 'refused: private, loopback or link-local address';

/**
 * The outbound HTTP client of the webhook and log-stream workers: an absolute http(s) URL without
 * credentials; unless private addresses are allowed, an IP literal must be public and a host name is
 * checked against the addresses actually connected to (`publicOnlyLookup`, so DNS rebinding cannot
 * slip past); a timeout over the whole exchange; the response body read up to a cap and dropped.
 * Resolves with the outcome, never rejects; the outcome's `error` never quotes the request.
 */
export function sendGuarded(request: GuardedRequest, options: GuardOptions): Promise<AttemptOutcome> {
  const started = performance.now();
  const cap = options.maxResponseBytes ?? 64 * 1024;
  const done = (statusCode: number | null, error: string | null): AttemptOutcome => ({
    ok: statusCode !== null && statusCode >= 200 && statusCode < 300,
    statusCode,
    error,
    durationMs: performance.now() - started,
  });
  const parsed = parseWebhookUrl(request.url);
  if (!parsed.ok) return Promise.resolve(done(null, parsed.message));
  const target = parsed.url;
  const host = hostOf(target);
  if (!options.allowPrivate && isIP(host) && !isPublicAddress(host)) return Promise.resolve(done(null, PRIVATE));
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const client = target.protocol === 'https:' ? https : http;
    // Built field by field: an object literal of two spreads is kept alive by V8 (tests/src/patches).
    const requestOptions: https.RequestOptions = {
      method: request.method,
      headers: { ...request.headers, 'Content-Length': Buffer.byteLength(request.body) },
      agent: false,
      signal: AbortSignal.timeout(options.timeoutMs),
    };
    if (options.ca) requestOptions.ca = options.ca;
    if (!options.allowPrivate) requestOptions.lookup = publicOnlyLookup as never;
    const outgoing = client.request(target, requestOptions, (response) => {
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > cap) {
          finish(done(response.statusCode ?? null, null));
          response.destroy();
        }
      });
      response.on('end', () => finish(done(response.statusCode ?? null, null)));
      response.on('error', (error) => finish(done(response.statusCode ?? null, error.message)));
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      const message =
        error.name === 'AbortError' || error.name === 'TimeoutError'
          ? `timeout after ${options.timeoutMs} ms`
          : error.code === 'EPRIVATE'
            ? PRIVATE
            : `${error.code ?? 'error'}: ${error.message}`;
      finish(done(null, message));
    });
    outgoing.end(request.body);
  });
}
