import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApiError,
  CONSOLE_SESSION_TTL_MS,
  type ConsoleCredentials,
  type Deps,
  describeConsoleSession,
  signInToConsole,
  signOutOfConsole,
} from '@atrium/routers';
import express, { type Request, type Response } from 'express';
import { applyHeaders, strictPageHeaders } from '../security.ts';
import { cookieValue, csrfToken, sessionCookie } from './cookies.ts';

/** The operator console's cookie (its session secret); its CSRF token comes in `CSRF_HEADER` (cookies.ts). */
export const CONSOLE_COOKIE = 'atrium_console';
/** The cookie is sent to the console's own paths (sign-out) and to `/trpc` (its calls), nowhere else. */
const COOKIE_PATHS = ['/console', '/trpc'];

/** `web/dist/console` from these sources (tests); the server passes its own (`consoleDir`), which also holds when bundled. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../../web/dist/console/', import.meta.url));

/** Scripts, styles and calls from this origin only; no inline script, no framing. */
const CONSOLE_HEADERS = strictPageHeaders({}, { crossOriginResourcePolicy: { policy: 'same-origin' } });

/** The console credentials of a request: the session cookie and the CSRF header. */
export function consoleCredentials(req: { headers: Request['headers'] }): ConsoleCredentials {
  return { session: cookieValue(req.headers, CONSOLE_COOKIE), csrf: csrfToken(req.headers) };
}

function setSessionCookies(res: Response, value: string, maxAgeSeconds: number, secure: boolean): void {
  res.setHeader(
    'Set-Cookie',
    COOKIE_PATHS.map((path) =>
      sessionCookie(CONSOLE_COOKIE, value, { path, sameSite: 'strict', maxAgeSeconds, secure }),
    ),
  );
}

const jsonBody = express.json({ limit: '4kb', strict: true });

/** The sign-in body, its refusals in the contract's terms (invalid JSON 400, too large 413). */
const readJson: express.RequestHandler = (req, res, next) =>
  jsonBody(req, res, (error?: unknown) => {
    if (!error) return next();
    const tooLarge = (error as { type?: string }).type === 'entity.too.large';
    next(
      tooLarge
        ? new ApiError(413, 'payload_too_large', 'The sign-in body is larger than 4 KiB.')
        : new ApiError(400, 'invalid_json', 'The body is not valid JSON.'),
    );
  });

/**
 * A browser's call from another site is refused before anything is read (403 `cross_origin`):
 * a page elsewhere must not sign a browser in (login CSRF) nor out. A browser names its page's
 * origin (`Origin`); scripts send none and pass.
 */
function assertSameOrigin(req: Request): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined;
  }
  if (host === undefined || host !== req.headers.host) {
    throw new ApiError(403, 'cross_origin', 'The console session is only opened or closed from the console itself.');
  }
}

/** `POST /console/session`: `{ token }` (the admin token) → the session cookie and `{ csrf_token, expires_at }`. */
async function signIn(deps: Deps, secure: boolean, req: Request, res: Response): Promise<void> {
  const token = (req.body as { token?: unknown } | undefined)?.token;
  if (typeof token !== 'string' || token.length === 0 || token.length > 256) {
    const field = { field: 'token', code: 'token_required', message: 'token (the admin token) is required' };
    throw new ApiError(422, 'invalid_request_parameters', 'Validation failed.', [field]);
  }
  const { secret, ...session } = await signInToConsole(deps, token.trim());
  setSessionCookies(res, secret, CONSOLE_SESSION_TTL_MS / 1000, secure);
  res.status(201).json(session);
}

/**
 * The console's routes on the Express shell: the page and its bundle (`dir`, built by
 * web/build.mjs) under a strict CSP, and its session (sign-in, the CSRF token after a
 * reload, sign-out).
 */
export function consoleRoutes(deps: Deps, baseUrl: string, dir: string): express.Router {
  const secure = baseUrl.startsWith('https:');
  const routes = express.Router();
  routes.use('/console', (_req, res, next) => {
    applyHeaders(res, CONSOLE_HEADERS);
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  routes.post(
    '/console/session',
    (req, _res, next) => next(assertSameOrigin(req)),
    readJson,
    (req, res) => signIn(deps, secure, req, res),
  );
  routes.get('/console/session', async (req, res) => {
    res.json(await describeConsoleSession(deps, consoleCredentials(req).session));
  });
  routes.delete('/console/session', async (req, res) => {
    assertSameOrigin(req);
    await signOutOfConsole(deps, consoleCredentials(req));
    setSessionCookies(res, '', 0, secure);
    res.status(204).end();
  });
  routes.get('/console/assets/:file', (req, res, next) => {
    const file = req.params.file;
    if (!/^[\w.-]+\.(js|css)$/.test(file) || !existsSync(join(dir, file))) return next();
    res.sendFile(join(dir, file));
  });
  routes.get(['/console', '/console/'], (_req, res) => {
    const page = join(dir, 'index.html');
    if (!existsSync(page)) {
      throw new ApiError(
        503,
        'console_not_built',
        'The console is not built: run `npm start` (or node web/build.mjs).',
      );
    }
    res.sendFile(page);
  });
  return routes;
}
