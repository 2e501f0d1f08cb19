import type { IncomingMessage } from 'node:http';
import { ApiError } from '@atrium/routers';

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * How long a whole request body may take to arrive, from when the pipeline starts reading it
 * (ATRIUM_BODY_TIMEOUT_MS): a body read waits for the network, not for the CPU, so a client
 * that sends 1 MiB at a crawl is cut here rather than kept while it holds a socket.
 */
export const BODY_TIMEOUT_MS = 10_000;

/** The size and time bounds of a request body. */
export interface BodyBounds {
  /** The most bytes a body may hold (413 past it). */
  limit: number;
  /** The longest a whole body may take to arrive (408 past it, the connection then closed). */
  timeoutMs: number;
}

export const DEFAULT_BODY_BOUNDS: BodyBounds = { limit: MAX_BODY_BYTES, timeoutMs: BODY_TIMEOUT_MS };

/**
 * The deepest nesting of objects and arrays a body may have. Deeper bodies are refused before
 * parsing: the tRPC adapter re-serialises the body, and recursion that deep overflows the stack.
 */
export const MAX_BODY_DEPTH = 64;

/** The deepest `{`/`[` nesting of a JSON text (strings skipped), stopping early past `limit`. */
export function nestingDepth(text: string, limit = MAX_BODY_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 125 || c === 93) depth--;
  }
  return max;
}

const tooLarge = () => new ApiError(413, 'payload_too_large', 'The request body is larger than 1 MiB.');

const tooSlow = (ms: number) =>
  new ApiError(408, 'request_timeout', `The request body did not arrive within ${Math.ceil(ms / 1000)} s.`);

/** Is this a refusal of the body's bounds (413, 408), after which the connection is closed? */
export function closesConnection(status: number): boolean {
  return status === 413 || status === 408;
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}

function isJson(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0]?.trim().toLowerCase();
  return type === 'application/json' || (type?.startsWith('application/') === true && type.endsWith('+json'));
}

/**
 * The whole body, refused past `limit` bytes (what has not arrived is drained, not kept) or
 * when it has not ended within `timeoutMs` (408; the rest is not read, and the answer closes
 * the connection). Read through the stream's events rather than `for await`: the stream's async
 * iterator costs more per request, and under load the objects of a request read that way were
 * kept across V8's scavenges and promoted (bench/README.md, tenth pass).
 */
export function readBody(req: IncomingMessage, bounds: BodyBounds = DEFAULT_BODY_BOUNDS): Promise<Buffer> {
  if (Number(req.headers['content-length'] ?? 0) > bounds.limit) {
    req.resume();
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onCut);
      req.off('close', onCut);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > bounds.limit) {
        done();
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    // The client went away before the body ended ('error' with ECONNRESET, or 'close'): a
    // client's doing, answered (to no one) as the incomplete JSON it is, not logged as a fault.
    const onCut = () => {
      done();
      reject(new ApiError(400, 'invalid_json', 'The request body ended before it was complete.'));
    };
    // Past the deadline the body is no longer kept (what still comes is drained until the 408
    // closes the connection, so the client reads its answer rather than a reset).
    const onLate = () => {
      done();
      req.resume();
      reject(tooSlow(bounds.timeoutMs));
    };
    const timer = setTimeout(onLate, bounds.timeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onCut);
    req.on('close', onCut);
  });
}

/**
 * Reads a JSON request body by the contract: no body is `{}`; a body needs a JSON content
 * type (415), at most 1 MiB (413), to arrive within the deadline (408), valid JSON (400
 * `invalid_json`) and an object (422).
 */
export async function readJsonBody(
  req: IncomingMessage,
  bounds: BodyBounds = DEFAULT_BODY_BOUNDS,
): Promise<Record<string, unknown>> {
  if (!hasBody(req)) return {};
  if (!isJson(req.headers['content-type'])) {
    req.resume();
    throw new ApiError(415, 'unsupported_media_type', 'Request bodies must be sent as application/json.');
  }
  const text = (await readBody(req, bounds)).toString('utf8');
  if (text.trim() === '') return {};
  if (nestingDepth(text) > MAX_BODY_DEPTH) {
    throw new ApiError(422, 'invalid_request_parameters', 'The request body is nested too deeply.', [
      { field: 'body', code: 'body_too_deep', message: `JSON may nest at most ${MAX_BODY_DEPTH} levels.` },
    ]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid_json', 'The request body is not valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ApiError(422, 'invalid_request_parameters', 'The request body must be a JSON object.', [
      { field: 'body', code: 'body_invalid', message: 'The request body must be a JSON object.' },
    ]);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Parses a query string the way every list expects: repeated keys become arrays, and
 * `name[]=` means `name` (the three `domains` encodings end up the same).
 */
export function parseQuery(search: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = Object.create(null);
  for (const [rawKey, value] of new URLSearchParams(search)) {
    const key = rawKey.endsWith('[]') ? rawKey.slice(0, -2) : rawKey;
    const previous = query[key];
    if (previous === undefined) query[key] = rawKey.endsWith('[]') ? [value] : value;
    else query[key] = Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return query;
}
