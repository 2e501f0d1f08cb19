import { hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  ApiError,
  authenticateAdmin,
  authenticateApiKeyWithId,
  authenticateClientBearer,
  authenticateDirectoryToken,
  bearer,
  type ClientCaller,
  type ConsoleSession,
  consoleSessionOf,
  type Deps,
  type DirectoryCaller,
  type EnvironmentInfo,
  isDirectoryToken,
  type RequestDevice,
} from '@atrium/routers';
import { consoleCredentials } from './console.ts';
import type { Exchange } from './exchange.ts';

/**
 * Where a request arrives: a REST path, `/trpc` (admin tokens too), an admin-only page
 * (`/metrics`: admin tokens only), or a SCIM path (a directory's SCIM token only).
 */
export type Surface = 'api' | 'trpc' | 'admin' | 'scim';

/**
 * Who is calling: a live API key, an admin token (its id) or console session (over `/trpc`), a
 * client token's user, or a client address.
 */
export type Identity =
  | { kind: 'key'; key: string; env: EnvironmentInfo }
  | { kind: 'admin'; key: string; tokenId?: string; consoleSession?: ConsoleSession }
  | { kind: 'client'; key: string; organizationKey: string; caller: ClientCaller }
  | { kind: 'directory'; key: string; caller: DirectoryCaller }
  | { kind: 'address'; key: string; clientRefusal?: ApiError };

/**
 * One bucket per client address (client-address.ts): an IPv4 address (IPv4-mapped IPv6
 * included), or the /64 of an IPv6 address, the block one host is usually given (so it cannot
 * mint a bucket per address).
 */
export function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const plain = address.split('%')[0] ?? address;
  if (!plain.includes(':')) return plain;
  if (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(plain)) return plain.slice(7);
  const [head = '', tail] = plain.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** The most of a User-Agent a session keeps (browsers send 100 to 300 characters). */
const MAX_USER_AGENT = 512;

/**
 * Where a client-surface request came from, as its session records it: the client's address
 * (client-address.ts) and the User-Agent, cut to `MAX_USER_AGENT`. Made once per request (the
 * authenticate step and the call context share it; nothing changes it).
 */
export function deviceOf(ex: Exchange): RequestDevice {
  if (ex.device) return ex.device;
  const agent = ex.req.headers['user-agent'];
  ex.device = { ipAddress: ex.client ?? null, userAgent: agent ? agent.slice(0, MAX_USER_AGENT) : null };
  return ex.device;
}

/** The widgets' `x-elevated-access-token` (sent on mutations after a verified code), or undefined. */
export function elevatedAccessOf(req: IncomingMessage): string | undefined {
  const value = req.headers['x-elevated-access-token'];
  return typeof value === 'string' && value.length > 0 && value.length <= 256 ? value : undefined;
}

/**
 * The authenticate step: the caller's identity, with the procedures' own authentication (cached
 * for live keys, never for failures). Every credential is checked, wherever it comes from: a
 * valid one is never refused because its address also sent bad ones (behind a proxy or NAT, an
 * address is many callers). What keeps a flood of bogus credentials cheap is the check itself:
 * a malformed one costs no query, a JWT is verified by its signature, and lookups of unknown
 * keys, tokens and sessions are batched, one query in flight per process
 * (routers/src/lib/batched-lookup.ts). A credential that fails (401/403), and a request with
 * none, leave the client address, whose own limit then answers. Other failures (the database
 * is down) propagate and answer as they would from the procedure.
 *
 * On `/trpc` a request without `Authorization` may carry the operator console's session cookie:
 * it is counted against its session, as an admin token is (its CSRF token is the procedure's).
 * An admin token's id, or the console session, goes on in the call context, so `adminProcedure`
 * does not look it up again (it still checks the console's CSRF token).
 */
export async function authenticate(deps: Deps, ex: Exchange, surface: Surface): Promise<Identity> {
  const header = ex.req.headers.authorization;
  try {
    if (!header) {
      const session = surface === 'trpc' ? consoleCredentials(ex.req).session : undefined;
      if (session === undefined) return addressOf(ex);
      const consoleSession = await consoleSessionOf(deps, session);
      return { kind: 'admin', key: `console:${consoleSession.id}`, consoleSession };
    }
    const secret = bearer(header);
    if (surface !== 'api' && secret?.startsWith('atrium_admin_')) {
      const tokenId = await authenticateAdmin(deps, header);
      return { kind: 'admin', key: `admin:${hash('sha256', secret, 'base64url')}`, tokenId };
    }
    if (surface === 'admin') return addressOf(ex);
    if (surface === 'scim') {
      if (!isDirectoryToken(secret)) return addressOf(ex);
      const caller = await authenticateDirectoryToken(deps, header);
      return { kind: 'directory', key: `directory:${caller.principal.directoryId}`, caller };
    }
    if (secret && JWT.test(secret)) {
      let caller: ClientCaller;
      try {
        caller = await authenticateClientBearer(deps, secret, deviceOf(ex));
      } catch (error) {
        // Kept, so the codec's credential check answers it without checking the token again.
        if (error instanceof ApiError && error.status === 403) return addressOf(ex, error);
        throw error;
      }
      return {
        kind: 'client',
        key: `client:${caller.env.id}:${caller.principal.userId ?? caller.principal.sessionId}`,
        organizationKey: `client-org:${caller.env.id}:${caller.principal.organizationId}`,
        caller,
      };
    }
    const { keyId, env } = await authenticateApiKeyWithId(deps, header);
    return { kind: 'key', key: keyId, env };
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return addressOf(ex);
    throw error;
  }
}

/**
 * The identity of a caller without a valid credential: its client address (made only then), and
 * the refusal of its client token if it sent one.
 */
function addressOf(ex: Exchange, clientRefusal?: ApiError): Identity {
  const key = addressKey(ex.client);
  return clientRefusal ? { kind: 'address', key, clientRefusal } : { kind: 'address', key };
}

/** A client or widget token (a JWT); API keys and admin tokens have their own prefixes. */
const JWT = /^[\w-]+\.[\w-]+\.[\w-]+$/;

/** The verified caller of a client token, for the client procedures' context. */
export function clientOf(identity: Identity | undefined): ClientCaller | undefined {
  return identity?.kind === 'client' ? identity.caller : undefined;
}

/**
 * Why the authenticate step refused a client or widget token (the identity is then the client
 * address), or undefined: the client codecs' credential check answers it as it stands.
 */
export function clientRefusalOf(identity: Identity | undefined): ApiError | undefined {
  return identity?.kind === 'address' ? identity.clientRefusal : undefined;
}

/** The environment of a caller authenticated by its API key, for the procedures' context. */
export function environmentOf(identity: Identity | undefined): EnvironmentInfo | undefined {
  return identity?.kind === 'key' ? identity.env : undefined;
}

/** The verified caller of a SCIM token (its directory), for the SCIM codec's credential step. */
export function directoryOf(identity: Identity | undefined): DirectoryCaller | undefined {
  return identity?.kind === 'directory' ? identity.caller : undefined;
}
