import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestDevice } from '@atrium/routers';
import type { Deadlined } from './deadline.ts';
import type { Admitted } from './in-flight.ts';

/** One request on its way through the pipeline: what the steps have learnt about it so far. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  method: string;
  pathname: string;
  /** The path as logs show it: secret segments (an invitation token) replaced (routes.ts `redact`). */
  logPath: string;
  search: string;
  /** The client's address (client-address.ts: the socket's peer, or past trusted proxies), if known. */
  client: string | undefined;
  /** `performance.now()` when it arrived. */
  started: number;
  /** Refused a turn by the in-flight limit (its 503 is not the database's). */
  shed: boolean;
  /** Where it came from, as a client token's session notes it (authenticate.ts `deviceOf`, made once). */
  device: RequestDevice | undefined;
  /** When its call's deadline passes (`performance.now()`), once dispatched (deadline.ts). */
  due: number;
  /** Its place among the calls running, while its call runs within the deadline (deadline.ts). */
  deadline: Deadlined['deadline'];
  /** Its turn of the in-flight limit while its call runs: released when the call ends or is cut. */
  turn: Admitted | undefined;
  /**
   * The headers the steps gathered for its answer, `[name, value, ...]` (request id, security,
   * CORS, rate limit): the codec sends them with its own in one `writeHead` (`writeHead` below).
   */
  answerHeaders: string[];
}

/** Where an answer goes: the response, and the headers the pipeline's steps gathered (none behind Express). */
export interface Answer {
  res: ServerResponse;
  answerHeaders?: string[] | undefined;
}

/**
 * Writes the status line and every header at once: the steps' headers, then the codec's own
 * (`[name, value, ...]`), one of its own replacing a step's of the same name. Node takes a list
 * given to `writeHead` as it is when nothing was `setHeader`ed before (about 35 us a request
 * less than 20 `setHeader` calls: bench/README.md, "The pipeline's per-request CPU").
 */
export function writeHead(to: Answer, status: number, own: (string | number)[]): void {
  const steps = to.answerHeaders;
  to.res.writeHead(status, steps && steps.length > 0 ? joined(steps, own) : own.map(String));
}

/**
 * Writes a whole answer: the headers with the body's `Content-Length`, then the body, in one
 * socket write. Without a length Node sends the body chunked (more writes, and chunks for the
 * client to parse); `head` keeps the length and leaves the body out (a HEAD request).
 */
export function writeAnswer(
  to: Answer,
  status: number,
  own: (string | number)[],
  body: string | Uint8Array | undefined,
  head = false,
): void {
  if (body !== undefined)
    own.push('Content-Length', typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  writeHead(to, status, own);
  to.res.end(body === undefined || head ? undefined : body);
}

/** `steps` without the names `own` has (case aside), then `own`. */
function joined(steps: string[], own: (string | number)[]): string[] {
  const list: string[] = [];
  for (let i = 0; i < steps.length; i += 2) {
    const name = steps[i] as string;
    if (!namedIn(own, name)) list.push(name, steps[i + 1] as string);
  }
  for (const item of own) list.push(String(item));
  return list;
}

/** Does a `[name, value, ...]` list name this header (case aside)? */
export function namedIn(list: (string | number)[], name: string): boolean {
  for (let j = 0; j < list.length; j += 2) {
    const other = list[j] as string;
    if (other.length === name.length && other.toLowerCase() === name.toLowerCase()) return true;
  }
  return false;
}

/** Adds a record's headers to a `[name, value, ...]` list, but none it names already (the first one named wins). */
export function pushHeaders(list: (string | number)[], headers: Record<string, string> | undefined): void {
  if (headers) for (const name in headers) if (!namedIn(list, name)) list.push(name, headers[name] as string);
}

const REQUEST_ID = /^[\w.:@/+=-]{1,200}$/;

/** Echo a caller's X-Request-ID when it is sane, else make one. */
function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** The request id step: every answer carries `X-Request-ID`; the URL is split once. */
export function beginExchange(req: IncomingMessage, res: ServerResponse, client: string | undefined): Exchange {
  const requestId = requestIdOf(req);
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const pathname = q === -1 ? url : url.slice(0, q);
  return {
    req,
    res,
    requestId,
    method: req.method ?? 'GET',
    pathname,
    logPath: pathname,
    search: q === -1 ? '' : url.slice(q + 1),
    client,
    started: performance.now(),
    shed: false,
    device: undefined,
    due: 0,
    deadline: undefined,
    turn: undefined,
    answerHeaders: ['X-Request-ID', requestId],
  };
}

/** The raw `Idempotency-Key` header, for the procedures' idempotency step (routers/src/idempotency). */
export function idempotencyKeyOf(ex: Exchange): string | undefined {
  const value = ex.req.headers['idempotency-key'];
  return Array.isArray(value) ? value[0] : value;
}
