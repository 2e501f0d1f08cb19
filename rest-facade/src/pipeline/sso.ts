import {
  ApiError,
  apiErrorOf,
  type BrowserOutcome,
  callProcedure,
  type Deps,
  OAUTH_ERRORS,
  type ProcedureEntry,
  procedureEntries,
  ssoRouter,
  trpcContractError,
} from '@atrium/routers';
import { parseQuery } from './body.ts';
import { type Exchange, pushHeaders, writeAnswer, writeHead } from './exchange.ts';
import { writeErrorPage } from './pages.ts';
import { decodeSegment } from './path-params.ts';
import type { Call, Codec } from './pipeline.ts';
import type { Cost } from './rate-limit.ts';
import { writeError } from './render.ts';

// The SSO codec: the browser's steps of single sign-on and the form-encoded token exchange, on
// the one pipeline (limits, body bounds, deadline), calling the `sso` procedures.
//   GET  /sso/authorize                       302 to the IdP (a refusal: JSON 4xx, nothing stored)
//   POST /sso/token                           JSON; OAuth errors as { error, error_description }
//   GET  /sso/logout?token=                   302 to the app (or a page)
//   POST /sso/saml/acs/:connection_id         form (SAMLResponse, RelayState); 302 to the app (or a page)
//   GET  /sso/oidc/callback/:connection_id    302 to the app (or a page)
//   GET  /sso/saml/metadata/:connection_id    application/samlmetadata+xml
// `GET /sso/profile`, `POST /sso/logout/authorize` and `GET /sso/jwks/:client_id` are REST routes.

/** The largest body an SSO step reads: a SAML response of a big IdP is about 100 KB, base64. */
export const SSO_MAX_BODY_BYTES = 512 * 1024;

type Kind = 'authorize' | 'token' | 'logout' | 'acs' | 'callback' | 'metadata';

export interface SsoCall extends Call {
  kind: Kind;
  entry: ProcedureEntry;
  connectionId: string | undefined;
  query: Record<string, string>;
}

const PROCEDURES: Record<Kind, string> = {
  authorize: 'authorize',
  token: 'token',
  logout: 'logout',
  acs: 'samlAcs',
  callback: 'oidcCallback',
  metadata: 'samlMetadata',
};

const FIXED: Record<string, { method: string; kind: Kind }> = {
  '/sso/authorize': { method: 'GET', kind: 'authorize' },
  '/sso/token': { method: 'POST', kind: 'token' },
  '/sso/logout': { method: 'GET', kind: 'logout' },
};
const BY_CONNECTION: Array<{ prefix: string; method: string; kind: Kind }> = [
  { prefix: '/sso/saml/acs/', method: 'POST', kind: 'acs' },
  { prefix: '/sso/oidc/callback/', method: 'GET', kind: 'callback' },
  { prefix: '/sso/saml/metadata/', method: 'GET', kind: 'metadata' },
];

/** Is this one of the SSO codec's paths? */
export function isSsoPath(pathname: string): boolean {
  return pathname in FIXED || BY_CONNECTION.some((r) => pathname.startsWith(r.prefix));
}

const ONE_REQUEST: Cost = { requests: 1, organizationDeletes: 0 };
const OAUTH = new Set<string>(OAUTH_ERRORS);

/** Which step a path is (for rendering a refusal before or after decode). */
function routeOf(pathname: string): { method: string; kind: Kind; connectionId?: string } | undefined {
  const fixed = FIXED[pathname];
  if (fixed) return fixed;
  for (const r of BY_CONNECTION) {
    if (!pathname.startsWith(r.prefix)) continue;
    const rest = pathname.slice(r.prefix.length);
    if (rest === '' || rest.includes('/')) return undefined;
    return { method: r.method, kind: r.kind, connectionId: decodeSegment(rest) ?? rest };
  }
  return undefined;
}

/** The first value of each query (or form) key. */
function firstValues(search: string): Record<string, string> {
  const out: Record<string, string> = {};
  const parsed = parseQuery(search);
  for (const key in parsed) {
    const value = parsed[key];
    out[key] = Array.isArray(value) ? (value[0] ?? '') : (value as string);
  }
  return out;
}

/** A form (`application/x-www-form-urlencoded`) or JSON body, as string fields. */
function fieldsOf(ex: Exchange, raw: Buffer | undefined): Record<string, string> {
  if (!raw || raw.length === 0) return {};
  const text = raw.toString('utf8');
  const type = String(ex.req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('application/json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ApiError(400, 'invalid_request', 'The body is not valid JSON.');
    }
    const out: Record<string, string> = {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      for (const [key, value] of Object.entries(parsed)) if (typeof value === 'string') out[key] = value;
    }
    return out;
  }
  return firstValues(text);
}

function redirect(ex: Exchange, location: string): void {
  writeHead(ex, 302, ['Location', location, 'Cache-Control', 'no-store', 'Content-Length', 0]);
  ex.res.end();
}

/** A browser step's outcome: on to the app or the IdP, or the error page (no app to send it to). */
function browserOutcome(ex: Exchange, outcome: BrowserOutcome): void {
  if (outcome.redirect) {
    redirect(ex, outcome.redirect);
    return;
  }
  const error = outcome.error ?? { reason: 'sso_failed', message: 'The sign-in failed.' };
  const signedOut = error.reason === 'signed_out';
  writeErrorPage(ex, signedOut ? 200 : 400, {
    title: signedOut ? 'Signed out' : 'Sign-in failed',
    reason: error.reason,
    message: error.message,
  });
}

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

function writeJson(ex: Exchange, status: number, body: unknown, headers?: Record<string, string>): void {
  const text = JSON.stringify(body);
  const own: (string | number)[] = [];
  pushHeaders(own, headers);
  pushHeaders(own, JSON_HEADERS);
  writeAnswer(ex, status, own, text);
}

export function ssoCodec(deps: Deps): Codec<SsoCall, unknown> {
  const entries = new Map(procedureEntries(ssoRouter).map((entry) => [entry.path, entry]));
  const entryOf = (kind: Kind): ProcedureEntry => {
    const entry = entries.get(PROCEDURES[kind]);
    if (!entry) throw new Error(`The SSO codec names no procedure '${PROCEDURES[kind]}'.`);
    return entry;
  };
  const issuer = deps.tokens.issuer.replace(/\/+$/, '');
  return {
    surface: 'api',
    decode(ex) {
      const route = routeOf(ex.pathname);
      if (!route) throw new ApiError(404, 'route_not_found', 'No such route.');
      const method = ex.method === 'HEAD' ? 'GET' : ex.method;
      if (method !== route.method) throw new ApiError(405, 'method_not_allowed', `${ex.method} is not allowed here.`);
      const length = Number(ex.req.headers['content-length'] ?? 0);
      if (length > SSO_MAX_BODY_BYTES) {
        throw new ApiError(413, 'payload_too_large', `The body is larger than ${SSO_MAX_BODY_BYTES} bytes.`);
      }
      return {
        cost: ONE_REQUEST,
        reads: route.method === 'POST' ? 'raw' : undefined,
        weight: 1,
        calls: 1,
        kind: route.kind,
        entry: entryOf(route.kind),
        connectionId: route.connectionId,
        query: firstValues(ex.search),
      };
    },
    dispatch(ex, call, ctx) {
      if (call.raw && call.raw.length > SSO_MAX_BODY_BYTES) {
        throw new ApiError(413, 'payload_too_large', `The body is larger than ${SSO_MAX_BODY_BYTES} bytes.`);
      }
      const q = call.query;
      switch (call.kind) {
        case 'authorize':
          return callProcedure(call.entry, ctx, q);
        case 'token':
          return callProcedure(call.entry, ctx, Object.assign({}, q, fieldsOf(ex, call.raw)));
        case 'logout': {
          const input: Record<string, string> = {};
          if (q.token !== undefined) input.token = q.token;
          return callProcedure(call.entry, ctx, input);
        }
        case 'acs': {
          const form = fieldsOf(ex, call.raw);
          if (!form.SAMLResponse) throw new ApiError(400, 'invalid_request', 'SAMLResponse is required.');
          const input: Record<string, string> = {
            connection_id: call.connectionId ?? '',
            SAMLResponse: form.SAMLResponse,
          };
          if (form.RelayState) input.RelayState = form.RelayState;
          return callProcedure(call.entry, ctx, input);
        }
        case 'callback': {
          // The redirect URI as registered at the provider, with the query the browser brought.
          const id = encodeURIComponent(call.connectionId ?? '');
          const url = `${issuer}/sso/oidc/callback/${id}${ex.search ? `?${ex.search}` : ''}`;
          return callProcedure(call.entry, ctx, { connection_id: call.connectionId ?? '', url });
        }
        case 'metadata':
          return callProcedure(call.entry, ctx, { connection_id: call.connectionId ?? '' });
      }
    },
    encode(ex, call, result) {
      switch (call.kind) {
        case 'authorize':
          return redirect(ex, (result as { url: string }).url);
        case 'token':
          return writeJson(ex, 200, result);
        case 'metadata': {
          const xml = result as string;
          writeAnswer(
            ex,
            200,
            ['Content-Type', 'application/samlmetadata+xml; charset=utf-8'],
            xml,
            ex.method === 'HEAD',
          );
          return;
        }
        default:
          return browserOutcome(ex, result as BrowserOutcome);
      }
    },
    encodeError(ex, error, headers) {
      const kind = routeOf(ex.pathname)?.kind;
      const api = apiErrorOf(error);
      if (kind === 'token' && api && OAUTH.has(api.apiCode)) {
        // Upstream's OAuth shape, with the contract's `code` and `message` beside it.
        const body = { error: api.apiCode, error_description: api.message, code: api.apiCode, message: api.message };
        return writeJson(ex, api.status, body, headers);
      }
      const browser = kind === 'acs' || kind === 'callback' || kind === 'logout';
      if (browser && (!api || api.status < 429)) {
        const { status, body } = trpcContractError(error);
        return writeErrorPage(
          ex,
          status,
          { title: 'Sign-in failed', reason: body.code, message: body.message },
          headers,
        );
      }
      writeError(ex, error, headers);
    },
  };
}
