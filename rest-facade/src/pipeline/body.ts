import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '@atrium/routers';
import { type Deadlined, Deadlines } from './deadline.ts';

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
  /** The bytes of bodies this process may hold at once (503 past it); none, unbounded. */
  budget?: BodyBudget;
  /** The bodies still arriving, cut past `timeoutMs` by one coarse timer (deadline.ts), made on first use. */
  arriving?: Deadlines<BodyRead, () => void>;
}

/** One body being read, as its bounds' `arriving` holds it until it ends. */
type BodyRead = Deadlined;

/** The bounds' bodies in flight: one interval for all of them rather than a timer each (deadline.ts). */
function arrivingOf(bounds: BodyBounds): Deadlines<BodyRead, () => void> {
  bounds.arriving ??= new Deadlines(bounds.timeoutMs, (_read, late) => late());
  return bounds.arriving;
}

/**
 * The bytes of request bodies a process holds at once: being read, waiting for a turn, or
 * running, each until its response closes. Bodies are read before a request queues (so a slow
 * one holds no turn), so this bounds what the queue holds in memory as the turns bound what
 * runs: by default 32 MiB, what 32 running requests of 1 MiB held when they were read in
 * their turn. A slow body holds only the bytes it has sent; past the budget a request gets
 * 503 at once (`atrium_http_shed_total{reason="body_budget"}`). Ordinary bodies are a few KB.
 */
export class BodyBudget {
  private held = 0;

  constructor(
    readonly max: number,
    private readonly onRefused: () => void = () => {},
  ) {}

  /** The bytes held now (tests). */
  get bytes(): number {
    return this.held;
  }

  take(bytes: number): boolean {
    if (this.held + bytes > this.max) {
      this.onRefused();
      return false;
    }
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.held -= bytes;
  }
}

export const BODY_BUDGET_BYTES = 32 * MAX_BODY_BYTES;

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

/** A body refused because the process holds its budget of body bytes: shed load, not the database down. */
export class BodyBudgetExceeded extends ApiError {
  constructor() {
    super(503, 'service_unavailable', 'The server is at capacity. Try again shortly.');
  }
}

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

// Not raw-body: it has no time limit and no per-chunk hook, so the budget (bytes held while a body still arrives) could not be kept.
/**
 * The whole body, refused past `limit` bytes (413) or when it has not ended within
 * `timeoutMs` (408, and the answer closes the connection), or when the process holds its
 * budget of body bytes already (503; counted until `res` closes). What has not arrived of a
 * refused body is drained, not kept. Read through the stream's events rather than `for await`: the stream's async
 * iterator costs more per request, and under load the objects of a request read that way were
 * kept across V8's scavenges and promoted (bench/README.md, tenth pass).
 */
export function readBody(
  req: IncomingMessage,
  bounds: BodyBounds = DEFAULT_BODY_BOUNDS,
  res?: ServerResponse,
): Promise<Buffer> {
  if (Number(req.headers['content-length'] ?? 0) > bounds.limit) {
    req.resume();
    return Promise.reject(tooLarge());
  }
  const budget = res ? bounds.budget : undefined;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const read: BodyRead = { due: 0 };
    const done = () => {
      arriving.end(read);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onCut);
      req.off('close', onCut);
    };
    // A refused body gives back what it held at once, and what has not arrived is drained.
    const refuse = (error: ApiError) => {
      done();
      budget?.give(size);
      req.resume();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > bounds.limit) return refuse(tooLarge());
      if (budget && !budget.take(chunk.length)) return refuse(new BodyBudgetExceeded());
      size += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      // Held until the response closes (sent, or its connection lost).
      if (budget && size > 0) res?.once('close', () => budget.give(size));
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    // The client went away before the body ended ('error' with ECONNRESET, or 'close'): a
    // client's doing, answered (to no one) as the incomplete JSON it is, not logged as a fault.
    const onCut = () => refuse(new ApiError(400, 'invalid_json', 'The request body ended before it was complete.'));
    // Past the deadline the body is no longer kept (what still comes is drained until the 408
    // closes the connection, so the client reads its answer rather than a reset).
    const arriving = arrivingOf(bounds);
    arriving.start(read, () => refuse(tooSlow(bounds.timeoutMs)));
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
  res?: ServerResponse,
): Promise<Record<string, unknown>> {
  if (!hasBody(req)) return {};
  if (!isJson(req.headers['content-type'])) {
    req.resume();
    throw new ApiError(415, 'unsupported_media_type', 'Request bodies must be sent as application/json.');
  }
  const text = (await readBody(req, bounds, res)).toString('utf8');
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
