import { ApiError, apiErrorOf, type Deps, trpcContractError } from '@atrium/routers';
import { type Answer, namedIn, pushHeaders, writeAnswer } from './exchange.ts';

/** The most bytes one response body may hold (the contract's 16 MiB), on every surface. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** The most calls one tRPC batch may hold (the contract's 10). */
export const MAX_BATCH_CALLS = 10;

const JSON_TYPE = 'application/json';
const ERROR_TYPE = 'application/json; charset=utf-8';

/**
 * What a dispatcher answers, before it is written: a status, a body (already serialised, or
 * none) and its content type. The render step alone turns it into bytes on the socket.
 */
export interface Outcome {
  status: number;
  body: string | undefined;
  contentType: string | undefined;
  /** The error it renders, when it is one (for the access log of 5xx). */
  error?: unknown;
  /** Headers of the outcome itself (an error's `Retry-After`). */
  headers?: Record<string, string>;
}

/**
 * A 4xx, not a 5xx: the same request would fail again, so a client must not retry it (the SDK
 * retries 5xx), but a smaller page will do.
 */
export function responseTooLarge(maxBytes: number): ApiError {
  return new ApiError(
    413,
    'response_too_large',
    `The response would be larger than ${maxBytes} bytes. Ask for a smaller page (a lower limit) or fewer calls per batch.`,
  );
}

/** The one place an error becomes the contract's status and JSON body. */
export function errorOutcome(error: unknown): Outcome {
  const { status, body } = trpcContractError(error);
  const retryAfter = apiErrorOf(error)?.retryAfterSeconds;
  const outcome: Outcome = { status, body: JSON.stringify(body), contentType: ERROR_TYPE, error };
  if (retryAfter !== undefined) outcome.headers = { 'Retry-After': String(retryAfter) };
  return outcome;
}

/** A procedure's result on the REST surface: its JSON, or nothing for a 204. */
export function successOutcome(status: number, data: unknown): Outcome {
  if (status === 204) return { status, body: undefined, contentType: undefined };
  return { status, body: JSON.stringify(data), contentType: JSON_TYPE };
}

/** The outcome, or 413 `response_too_large` in its place when its body is over `maxBytes`. */
export function bounded(outcome: Outcome, maxBytes: number): Outcome {
  if (outcome.body === undefined || outcome.body.length * 3 <= maxBytes) return outcome;
  return Buffer.byteLength(outcome.body) > maxBytes ? errorOutcome(responseTooLarge(maxBytes)) : outcome;
}

/**
 * Writes an outcome with its length, after the headers the steps gathered (ids, limits); `headers`
 * (the procedures', a refusal's) win over the outcome's own.
 */
export function writeOutcome(to: Answer, outcome: Outcome, headers?: Record<string, string>): void {
  const own: (string | number)[] = [];
  pushHeaders(own, headers);
  pushHeaders(own, outcome.headers);
  if (outcome.contentType && !namedIn(own, 'Content-Type')) own.push('Content-Type', outcome.contentType);
  writeAnswer(to, outcome.status, own, outcome.body);
}

/**
 * Renders an error in the contract's JSON: the REST codec's error encoding, and the pages'
 * (pages.ts, portal.ts, console.ts). The bound cannot apply: error bodies are small.
 */
export function writeError(to: Answer, error: unknown, headers?: Record<string, string>): void {
  writeOutcome(to, errorOutcome(error), headers);
}

/** A 5xx is the service's fault: logged with its cause and the request's id and path (secrets redacted). */
export function logFailure(deps: Deps, error: unknown, ex: { requestId: string; logPath: string }): void {
  const err = error instanceof Error && error.cause !== undefined ? error.cause : error;
  deps.log.error({ err, req_id: ex.requestId, path: ex.logPath }, 'request failed');
}
