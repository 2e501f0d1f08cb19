import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestDevice } from '@atrium/routers';

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
  res.setHeader('X-Request-ID', requestId);
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
  };
}

/** The raw `Idempotency-Key` header, for the procedures' idempotency step (routers/src/idempotency). */
export function idempotencyKeyOf(ex: Exchange): string | undefined {
  const value = ex.req.headers['idempotency-key'];
  return Array.isArray(value) ? value[0] : value;
}
