/**
 * Percent-decoding of path parameters. trpc-to-openapi matches a request against the
 * procedures' paths on `new URL(req.url).pathname` and hands each `{param}` to the procedure
 * exactly as it appears there, still percent-encoded: `GET /organizations/external_id/a%20b`
 * would look for the external id `a%20b`. Decoding `req.url` before the bridge cannot help (the
 * URL parser encodes a space or a non-ASCII character again), so the decoding happens where the
 * bridge calls the procedure: routing stays on the encoded path (an encoded `/` stays inside
 * its segment), and each parameter value the bridge extracted is replaced by its decoding.
 */

/** The values the bridge will extract for a template's parameters, with their decodings. */
export type PathParams = Map<string, { raw: string; decoded: string }>;

/** `decodeURIComponent`, or undefined for a malformed escape (the value is then left as sent). */
export function decodeSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * The parameters of `template` (`/organizations/external_id/{external_id}`) in `pathname` (the
 * request's path as sent) that decode to something else; empty when nothing is encoded.
 */
export function pathParamsOf(template: string, pathname: string): PathParams {
  const params: PathParams = new Map();
  if (!pathname.includes('%')) return params;
  let bridgePath: string;
  try {
    // The very path the bridge matches on (the URL parser normalises a few escapes).
    bridgePath = new URL(`http://127.0.0.1${pathname.startsWith('/') ? '' : '/'}${pathname}`).pathname;
  } catch {
    return params;
  }
  const segments = bridgePath.replace(/^\/|\/$/g, '').split('/');
  const names = template.replace(/^\/|\/$/g, '').split('/');
  if (segments.length !== names.length) return params;
  names.forEach((name, i) => {
    const match = /^\{(.+)\}$/.exec(name);
    const raw = segments[i];
    if (!match?.[1] || raw === undefined) return;
    const decoded = decodeSegment(raw);
    if (decoded !== undefined && decoded !== raw) params.set(match[1], { raw, decoded });
  });
  return params;
}

/** The input with each parameter the bridge extracted (still encoded) replaced by its decoding. */
export function decodeInput(input: unknown, params: PathParams): unknown {
  if (params.size === 0 || input === null || typeof input !== 'object' || Array.isArray(input)) return input;
  const out: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const [name, { raw, decoded }] of params) {
    if (out[name] === raw) out[name] = decoded;
  }
  return out;
}

/**
 * A tRPC caller whose procedures get their path parameters decoded. The bridge walks the
 * caller by the procedure's dotted path and calls the leaf with the input it built.
 */
export function decodingCaller<T extends object>(caller: T, params: PathParams): T {
  if (params.size === 0) return caller;
  const wrap = (target: unknown): unknown =>
    new Proxy(() => undefined, {
      get: (_fn, key) => wrap((target as Record<PropertyKey, unknown>)[key]),
      apply: (_fn, _this, args: unknown[]) =>
        (target as (...a: unknown[]) => unknown)(decodeInput(args[0], params), ...args.slice(1)),
    });
  return wrap(caller) as T;
}
