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

/** The matched parameters, each decoded when the request's path carries escapes at all. */
export function decodedParams(groups: Record<string, string>, pathname: string): Record<string, string> {
  if (!pathname.includes('%')) return groups;
  const params: Record<string, string> = {};
  for (const name in groups) {
    const raw = groups[name] as string;
    params[name] = decodeSegment(raw) ?? raw;
  }
  return params;
}
