/**
 * The path step: a REST call's `{param}` values, percent-decoded. The path is matched as the
 * URL parser normalises it (stray characters escaped), as trpc-to-openapi matched it, and each
 * parameter is decoded after routing (routes.ts), so an encoded `/` stays inside its segment:
 * `GET /organizations/external_id/a%2Fb` reads the external id `a/b`.
 */

/** `decodeURIComponent`, or undefined for a malformed escape (the value is then left as sent). */
export function decodeSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * Paths the URL parser leaves exactly as they are (nothing to escape; dot segments are refused
 * first): `/trpc/organizations.list,users.get` and escaped ids skip the parser.
 */
const PLAIN_PATH = /^[\w\-/.~!$&'()*+,;=:@%]*$/;

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
  // Most paths are already so: one leading `/`, none trailing.
  if (path.length > 1 && path.charCodeAt(0) === 47 && path.charCodeAt(path.length - 1) !== 47) return path;
  return `/${path.replace(/^\/|\/$/g, '')}`;
}
