/**
 * The path step: a REST call's `{param}` values, percent-decoded. The path is matched as the
 * URL parser normalises it (dot segments resolved, stray characters escaped), as the OpenAPI
 * bridge matches it, and each parameter is decoded after routing, so an encoded `/` stays
 * inside its segment: `GET /organizations/external_id/a%2Fb` reads the external id `a/b`.
 */

/** `decodeURIComponent`, or undefined for a malformed escape (the value is then left as sent). */
export function decodeSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** Paths the URL parser leaves exactly as they are (no escapes, no dots, nothing to escape). */
const PLAIN_PATH = /^[A-Za-z0-9_\-/]*$/;

/** A `.` or `..` segment, also percent-encoded. */
export const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

/**
 * The request's path as the URL parser normalises it, without a trailing slash; undefined for a
 * path with dot segments, which names no resource (`/organizations/X/groups/..` would otherwise
 * route to the organization itself).
 */
export function normalisedPath(pathname: string): string | undefined {
  if (DOT_SEGMENT.test(pathname)) return undefined;
  let path = pathname;
  if (!PLAIN_PATH.test(pathname)) {
    try {
      path = new URL(`http://127.0.0.1${pathname.startsWith('/') ? '' : '/'}${pathname}`).pathname;
    } catch {
      // Left as sent: it then matches no route.
    }
  }
  return `/${path.replace(/^\/|\/$/g, '')}`;
}

/**
 * The matched parameters, each decoded when the request's path carries escapes at all. Only
 * strings are decoded: the bridge hands over its whole input (body fields too), and a number
 * or object in the body must reach validation as it was sent.
 */
export function decodedParams<T extends Record<string, unknown>>(groups: T, pathname: string): T {
  if (!pathname.includes('%')) return groups;
  const params: Record<string, unknown> = {};
  for (const name in groups) {
    const raw = groups[name];
    params[name] = typeof raw === 'string' ? (decodeSegment(raw) ?? raw) : raw;
  }
  return params as T;
}
