import type { IncomingHttpHeaders } from 'node:http';
import { parseCookie, stringifySetCookie } from 'cookie';

/**
 * The two cookie sessions' shared parts (the console's and the admin portal's): reading one
 * cookie of a request, writing a session cookie, and the header that carries the CSRF token of a
 * cookie-authenticated write. Parsing and serializing are the `cookie` package's (1.x, the package Express
 * uses at 0.7 for `res.cookie`; 2.x needs Node 22).
 */
export const CSRF_HEADER = 'x-csrf-token';

/** The value of one cookie of a request, if present (the first of that name; malformed pairs are skipped). */
export function cookieValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const header = headers.cookie;
  return header ? parseCookie(header)[name] : undefined;
}

/** The CSRF token a request carries, if it carries exactly one. */
export function csrfToken(headers: IncomingHttpHeaders): string | undefined {
  const value = headers[CSRF_HEADER];
  return typeof value === 'string' ? value : undefined;
}

export interface SessionCookie {
  path: string;
  sameSite: 'strict' | 'lax';
  maxAgeSeconds: number;
  /** Only over https (the server's public URL is https). */
  secure: boolean;
}

/** A `Set-Cookie` value for a session secret: HttpOnly always; `maxAgeSeconds` 0 clears it. */
export function sessionCookie(name: string, value: string, cookie: SessionCookie): string {
  return stringifySetCookie({
    name,
    value,
    path: cookie.path,
    httpOnly: true,
    sameSite: cookie.sameSite,
    maxAge: cookie.maxAgeSeconds,
    secure: cookie.secure,
  });
}
