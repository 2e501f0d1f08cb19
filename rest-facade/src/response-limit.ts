import type { ServerResponse } from 'node:http';
import { ApiError } from '@atrium/routers';

/** The most bytes one response body may hold (the contract's 16 MiB), on every surface. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** The most calls one tRPC batch may hold (the contract's 10). */
export const MAX_BATCH_CALLS = 10;

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

function byteLength(chunk: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk);
  if (chunk instanceof Uint8Array) return chunk.byteLength;
  return 0;
}

/**
 * Holds the body written to `res` to `maxBytes`. A body that would go past it is never sent:
 * while the headers are unsent it is replaced by `render(error)` with the error's status (the
 * whole body of both surfaces arrives in one write), else the connection is cut. Later writes
 * are dropped, so nothing more is buffered for the socket.
 */
export function boundResponse(res: ServerResponse, maxBytes: number, render: (error: ApiError) => string): void {
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  const end = res.end.bind(res) as (chunk?: unknown, ...rest: unknown[]) => ServerResponse;
  let written = 0;
  let refused = false;

  /** True when the chunk fits; otherwise answers the refusal (or cuts the connection) instead. */
  const admit = (chunk: unknown): boolean => {
    if (refused) return false;
    written += byteLength(chunk);
    if (written <= maxBytes) return true;
    refused = true;
    if (res.headersSent) {
      res.destroy();
      return false;
    }
    const error = responseTooLarge(maxBytes);
    const body = render(error);
    res.statusCode = error.status;
    res.removeHeader('Content-Encoding');
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    end(body);
    return false;
  };

  res.write = ((chunk: unknown, ...rest: unknown[]) =>
    admit(chunk) ? write(chunk, ...rest) : true) as typeof res.write;
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'function') return refused ? res : end(chunk, ...rest);
    return admit(chunk) ? end(chunk, ...rest) : res;
  }) as typeof res.end;
}
