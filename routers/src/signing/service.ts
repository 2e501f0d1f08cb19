import { createHash } from 'node:crypto';
import { newId } from '@atrium/db';
import { decodeProtectedHeader, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { iso } from '../common/schemas.ts';
import { environmentIdOfClient } from '../environments/store.ts';
import { processCache } from '../invalidation/cache.ts';
import { publishInvalidation } from '../invalidation/service.ts';
import type { Deps, LoadedSigningKey } from '../kernel/deps.ts';
import { notFound } from '../kernel/errors.ts';
import { decryptPrivateKey, encryptPrivateKey, generateKeyMaterial, publicKeyOf } from './material.ts';
import type { Jwks } from './schemas.ts';
import { insertFirstKey, insertRotatedKey, type KeyRow, keysOf, type NewKey, publishedKeys } from './store.ts';

/** The longest lifetime of anything a key signs: a retiring key stays published this long. */
function longestTokenMs(deps: Deps): number {
  return Math.max(deps.tokens.clientTokenTtlSeconds, deps.tokens.agentAccessTokenTtlSeconds) * 1000;
}

function jwkOf(row: KeyRow) {
  return {
    alg: 'RS256',
    kty: 'RSA',
    use: 'sig',
    x5c: [row.certificate],
    n: row.publicJwk.n,
    e: row.publicJwk.e,
    kid: row.id,
    'x5t#S256': row.thumbprint,
  };
}

/** A new key row: fresh material, the private key sealed under the master key. */
async function newKey(deps: Deps, environmentId: string, now: Date, activeFrom: Date): Promise<NewKey> {
  const id = newId('signingKey');
  const material = await generateKeyMaterial(id, now);
  return {
    id,
    environmentId,
    publicJwk: material.publicJwk,
    certificate: material.certificate,
    thumbprint: material.thumbprint,
    privateKeyEncrypted: encryptPrivateKey(deps.tokens.masterKey, id, material.privateKeyDer),
    activeFrom,
    createdAt: now,
  };
}

/** Makes the first key of an environment when it has no published key (serialised per environment). */
async function ensureFirstKey(deps: Deps, environmentId: string): Promise<void> {
  const now = deps.now();
  await insertFirstKey(deps.db, await newKey(deps, environmentId, now, now), now);
}

/**
 * An environment's published keys and JWKS, as this process keeps them: until a key becomes
 * active or retires (`expiresAt`), or a rotation's notification clears it in every process
 * (LISTEN/NOTIFY, invalidation/service.ts); while this process does not hear the channel, also
 * `tokens.keyCacheTtlMs` at most, which is why a new key waits `rotationDelayMs` (longer) before it signs.
 */
export interface KeyCacheEntry {
  environmentId: string;
  clientId: string;
  /** Published keys, newest first, with their decrypted private keys. */
  keys: LoadedSigningKey[];
  /** The JWKS document and its ETag, computed once per entry. */
  jwks: { body: { keys: Record<string, unknown>[] }; etag: string };
  /** When this entry must be reloaded: the next key becoming active or retiring. */
  expiresAt: number;
}

/** Signing keys by environment id (the environments this process signs or verifies for). */
export const signingKeyCache = processCache<KeyCacheEntry>({
  max: 10_000,
  untilNotified: true,
  alive: (entry, nowMs) => entry.expiresAt > nowMs,
  forget: { signing_keys: (entry, id) => entry.environmentId === id },
});

/**
 * An environment's published keys, from memory (`signingKeyCache`). The first call in this
 * process loads them (making the environment's first key if it has none) and decrypts the
 * private keys.
 */
export async function loadKeys(deps: Deps, environmentId: string, clientId: string): Promise<KeyCacheEntry> {
  const nowMs = deps.now().getTime();
  const entry = await signingKeyCache(deps).resolve(environmentId, nowMs, deps.tokens.keyCacheTtlMs, () =>
    readKeys(deps, environmentId, clientId),
  );
  return entry as KeyCacheEntry;
}

async function readKeys(deps: Deps, environmentId: string, clientId: string): Promise<KeyCacheEntry> {
  let nowMs = deps.now().getTime();
  const read = () => publishedKeys(deps.db, environmentId, new Date(nowMs));
  let rows = await read();
  if (rows.length === 0) {
    await ensureFirstKey(deps, environmentId);
    nowMs = deps.now().getTime();
    rows = await read();
  }
  const keys: LoadedSigningKey[] = rows.map((row) => ({
    kid: row.id,
    activeFrom: row.activeFrom.getTime(),
    retiresAt: row.retiresAt?.getTime() ?? null,
    publicKey: publicKeyOf(row.publicJwk),
    privateKey: decryptPrivateKey(deps.tokens.masterKey, row.id, row.privateKeyEncrypted),
  }));
  const body = { keys: rows.map(jwkOf) };
  const etag = `"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 32)}"`;
  const transitions = keys.flatMap((k) => [k.activeFrom, k.retiresAt ?? Number.POSITIVE_INFINITY]);
  const next = Math.min(...transitions.filter((t) => t > nowMs));
  return { environmentId, clientId, keys, jwks: { body, etag }, expiresAt: next };
}

/** The environment id of a client id (cached: the pair never changes). */
async function environmentOfClient(deps: Deps, clientId: string): Promise<string> {
  const cached = deps.caches.clients.get(clientId);
  if (cached) return cached;
  const id = await environmentIdOfClient(deps.db, clientId);
  if (!id) throw notFound('client', clientId);
  deps.caches.clients.set(clientId, id);
  return id;
}

/** Operation 21: every published key of the client's environment, and its ETag. */
export async function jwksOfClient(deps: Deps, clientId: string): Promise<{ body: Jwks; etag: string }> {
  const environmentId = await environmentOfClient(deps, clientId);
  const entry = await loadKeys(deps, environmentId, clientId);
  return entry.jwks as { body: Jwks; etag: string };
}

/**
 * The key that signs now: the newest published key whose activation time has come. (Newest by
 * creation, so the latest rotation wins even when an earlier one activates later.)
 */
function signingKeyOf(entry: KeyCacheEntry, nowMs: number): LoadedSigningKey {
  let best: LoadedSigningKey | undefined;
  for (const key of entry.keys) {
    if (key.activeFrom <= nowMs && (!best || key.kid > best.kid)) best = key;
  }
  // None active yet (only a first key made an instant after `nowMs`): the earliest one.
  best ??= [...entry.keys].sort((a, b) => a.activeFrom - b.activeFrom)[0];
  if (!best) throw new Error(`Environment ${entry.environmentId} has no signing key.`);
  return best;
}

export interface SignedToken {
  token: string;
  kid: string;
  issuedAt: Date;
  expiresAt: Date;
}

/**
 * Token kinds (contract "Token kinds"): each has its own `typ` header and audience, and is
 * accepted only where its kind belongs. Agent access tokens keep `aud` = the client id (the
 * Node SDK's local check expects it); client tokens get an audience of their own, so that
 * check refuses them.
 */
export const TOKEN_KINDS = {
  agent: { typ: 'at+jwt', audience: (clientId: string) => clientId },
  client: { typ: 'atrium-client+jwt', audience: (clientId: string) => `${clientId}:client_api` },
} as const;
export type TokenKind = keyof typeof TOKEN_KINDS;

/**
 * Signs an RS256 JWT of `kind` with the environment's active key: `typ` and `aud` of the kind,
 * `iss` (this service), `iat` (`issuedAt`, default now, to the second), `exp` (`ttlSeconds`
 * later) and the given claims.
 */
export async function signToken(
  deps: Deps,
  env: { id: string; clientId: string },
  kind: TokenKind,
  claims: JWTPayload & { sub: string },
  ttlSeconds: number,
  issuedAt?: Date,
): Promise<SignedToken> {
  const entry = await loadKeys(deps, env.id, env.clientId);
  const now = issuedAt ?? deps.now();
  // The key is chosen by the clock, not by `issuedAt` (which may be rounded down).
  const key = signingKeyOf(entry, deps.now().getTime());
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + ttlSeconds;
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: TOKEN_KINDS[kind].typ })
    .setIssuer(deps.tokens.issuer)
    .setAudience(TOKEN_KINDS[kind].audience(env.clientId))
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(key.privateKey);
  return { token, kid: key.kid, issuedAt: new Date(iat * 1000), expiresAt: new Date(exp * 1000) };
}

/**
 * Verifies a JWT of `kind` against the environment's published keys (signature, `alg`, `typ`,
 * `iss`, `aud`, `exp`); `audience` overrides the kind's own (a resource audience). Returns the
 * payload, or null for anything invalid, including a token of another kind; never throws.
 */
export async function verifyToken(
  deps: Deps,
  env: { id: string; clientId: string },
  kind: TokenKind,
  token: string,
  audience: string = TOKEN_KINDS[kind].audience(env.clientId),
): Promise<JWTPayload | null> {
  const cache = verifiedTokens(deps);
  const scope = `${env.id}:${kind}:${audience}`;
  const known = cache.get(token);
  if (known?.scope === scope) {
    const entry = await loadKeys(deps, env.id, env.clientId);
    if (!entry.keys.some((k) => k.kid === known.kid)) return null;
    return stillValid(known.payload, deps.now()) ? known.payload : null;
  }
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    return null;
  }
  if (!kid) return null;
  const entry = await loadKeys(deps, env.id, env.clientId);
  const key = entry.keys.find((k) => k.kid === kid);
  if (!key) return null;
  try {
    const { payload } = await jwtVerify(token, key.publicKey, {
      algorithms: ['RS256'],
      typ: TOKEN_KINDS[kind].typ,
      issuer: deps.tokens.issuer,
      audience,
      currentDate: deps.now(),
    });
    if (token.length <= MAX_REMEMBERED_TOKEN_LENGTH) {
      if (cache.size >= MAX_VERIFIED_TOKENS) cache.delete(cache.keys().next().value as string);
      cache.set(token, { scope, kid, payload });
    }
    return payload;
  } catch {
    return null;
  }
}

/**
 * The claims of a token this process has verified before (for any environment or kind), read
 * without decoding it again; undefined otherwise. Only a hint (which environment a token names):
 * `verifyToken` still decides.
 */
export function rememberedClaims(deps: Deps, token: string): JWTPayload | undefined {
  return verifiedTokens(deps).get(token)?.payload;
}

/** Verified tokens this process remembers at most (past it the oldest is forgotten). */
const MAX_VERIFIED_TOKENS = 10_000;
/** Longer tokens are verified every time (Atrium's own are under 1 KiB): at most ~20 MiB remembered. */
const MAX_REMEMBERED_TOKEN_LENGTH = 2048;

/** What a verified token was verified for (environment, kind, audience), with which key, and its claims. */
interface VerifiedToken {
  scope: string;
  kid: string;
  payload: JWTPayload;
}
const verifiedCaches = new WeakMap<Deps['caches'], Map<string, VerifiedToken>>();

/**
 * Tokens whose signature, `typ`, `iss` and `aud` this process has verified, by the token itself:
 * those never change, so a token used again costs no RSA verification (~12 % of a client-surface
 * request's CPU, bench/README.md) and no decoding. Its key must still be published and its times
 * still hold, checked on every use; whatever else the caller checks (the session) is read every time.
 */
function verifiedTokens(deps: Deps): Map<string, VerifiedToken> {
  let cache = verifiedCaches.get(deps.caches);
  if (!cache) {
    cache = new Map();
    verifiedCaches.set(deps.caches, cache);
  }
  return cache;
}

/** `exp` not passed and `nbf` reached at `now`, as jwtVerify checks them. */
function stillValid(payload: JWTPayload, now: Date): boolean {
  const seconds = Math.floor(now.getTime() / 1000);
  if (typeof payload.exp === 'number' && payload.exp <= seconds) return false;
  return typeof payload.nbf !== 'number' || payload.nbf <= seconds;
}

function toSigningKey(row: KeyRow, nowMs: number) {
  return {
    kid: row.id,
    thumbprint: row.thumbprint,
    created_at: iso(row.createdAt),
    active_from: iso(row.activeFrom),
    retires_at: row.retiresAt ? iso(row.retiresAt) : null,
    signing: false,
    published: row.retiresAt === null || row.retiresAt.getTime() > nowMs,
  };
}

/** Every key of an environment (published or not), newest first; marks the one that signs now. */
export async function listSigningKeys(deps: Deps, environmentId: string) {
  const nowMs = deps.now().getTime();
  const rows = await keysOf(deps.db, environmentId);
  const listed = rows.map((row) => toSigningKey(row, nowMs));
  // Rows are newest first: the first published, activated one signs (as in signingKeyOf).
  const active = listed.find((k) => k.published && Date.parse(k.active_from) <= nowMs);
  if (active) active.signing = true;
  return listed;
}

/**
 * Rotation: a new key, published at once, signing after `delayMs` (default
 * `tokens.rotationDelayMs`, so caches of the JWKS catch up first). Every key that had no
 * successor stays published until the longest token it can still sign has expired.
 */
export async function rotateSigningKey(deps: Deps, environmentId: string, delayMs = deps.tokens.rotationDelayMs) {
  const now = deps.now();
  const activeFrom = new Date(now.getTime() + delayMs);
  const retiresAt = new Date(activeFrom.getTime() + longestTokenMs(deps));
  const key = await newKey(deps, environmentId, now, activeFrom);
  // The notification leaves with the commit: every process drops its copy of the key set.
  await deps.db.transaction(async (tx) => {
    await insertRotatedKey(tx, key, retiresAt);
    await publishInvalidation(tx, 'signing_keys', environmentId);
  });
  signingKeyCache(deps).delete(environmentId);
  return {
    environment_id: environmentId,
    kid: key.id,
    active_from: iso(activeFrom),
    previous_keys_retire_at: iso(retiresAt),
  };
}
