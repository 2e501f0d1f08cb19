import { type Deps, jwksOfClient } from '@atrium/routers';
import { type Exchange, writeAnswer } from './exchange.ts';
import { decodeSegment } from './path-params.ts';

export const JWKS_TEMPLATE = '/sso/jwks/{clientId}';

/** The JWKS documents as sent, serialised once per cached key set. */
const serialisedJwks = new WeakMap<object, string>();

/** Does an `If-None-Match` header name the response's ETag (or `*`)? Weak comparison. */
function etagMatches(ifNoneMatch: string | string[] | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = (Array.isArray(ifNoneMatch) ? ifNoneMatch.join(',') : ifNoneMatch).split(',').map(strip);
  return wanted.includes('*') || wanted.includes(strip(etag));
}

/**
 * `GET /sso/jwks/:clientId` is public, cacheable and the hottest read of all (every token
 * verifier polls it), so it is answered from the signing service's in-memory key set (the same
 * `jwksOfClient` the procedure returns), serialised once per key set. Refusing it would cost as
 * much as serving it, so it takes neither a rate-limit count nor an in-flight turn.
 */
export async function serveJwks(deps: Deps, ex: Exchange) {
  const { req, pathname } = ex;
  req.resume();
  const raw = pathname.slice(pathname.lastIndexOf('/') + 1);
  // Decoded as the other path parameters are; a malformed escape is looked up as sent (404).
  const clientId = decodeSegment(raw) ?? raw;
  const { body, etag } = await jwksOfClient(deps, clientId);
  if (etagMatches(req.headers['if-none-match'], etag)) {
    writeAnswer(ex, 304, ['Cache-Control', 'public, max-age=300', 'ETag', etag], undefined);
    return;
  }
  let text = serialisedJwks.get(body);
  if (text === undefined) {
    text = JSON.stringify(body);
    serialisedJwks.set(body, text);
  }
  const own = ['Cache-Control', 'public, max-age=300', 'ETag', etag, 'Content-Type', 'application/json'];
  writeAnswer(ex, 200, own, text);
}
