import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** One request on its way through the pipeline: what the steps have learnt about it so far. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  method: string;
  pathname: string;
  search: string;
  /** `performance.now()` when it arrived. */
  started: number;
  /** Refused a turn by the in-flight limit (its 503 is not the database's). */
  shed: boolean;
}

const REQUEST_ID = /^[\w.:@/+=-]{1,200}$/;

/** Echo a caller's X-Request-ID when it is sane, else make one. */
function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** The request id step: every answer carries `X-Request-ID`; the URL is split once. */
export function beginExchange(req: IncomingMessage, res: ServerResponse): Exchange {
  const requestId = requestIdOf(req);
  res.setHeader('X-Request-ID', requestId);
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return {
    req,
    res,
    requestId,
    method: req.method ?? 'GET',
    pathname: q === -1 ? url : url.slice(0, q),
    search: q === -1 ? '' : url.slice(q + 1),
    started: performance.now(),
    shed: false,
  };
}

/** The raw `Idempotency-Key` header, for the procedures' idempotency step (routers/src/idempotency). */
export function idempotencyKeyOf(ex: Exchange): string | undefined {
  const value = ex.req.headers['idempotency-key'];
  return Array.isArray(value) ? value[0] : value;
}
