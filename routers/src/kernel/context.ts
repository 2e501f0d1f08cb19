// The call context every transport hands to a procedure: the raw credentials of one request.
import type { Deps } from './deps.ts';
import type { ApiError } from './errors.ts';
import type { ClientPrincipal, DirectoryPrincipal } from './principals.ts';
import type { EnvironmentInfo } from './scope.ts';

/** Where a request came from, as the transport saw it: the socket's address and the User-Agent. */
export interface RequestDevice {
  ipAddress: string | null;
  userAgent: string | null;
}

/** The inner context: what a caller (tRPC, REST or a test) hands to the router. */
export interface Context {
  deps: Deps;
  /** The raw `Authorization` header, resolved lazily by the procedures that need it. */
  authorization: string | undefined;
  requestId?: string | undefined;
  /** The raw `Idempotency-Key` header; the idempotency step (idempotency/middleware.ts) reads it. */
  idempotencyKey?: string | undefined;
  /** The environment of `authorization`, when the transport has resolved it already (once per request). */
  environment?: EnvironmentInfo | undefined;
  /**
   * The caller of a client surface, when the transport has verified its token already (once per
   * request, for the per-user limits); `clientProcedure` verifies it otherwise.
   */
  client?: { env: EnvironmentInfo; principal: ClientPrincipal } | undefined;
  /**
   * The refusal of `authorization`'s client token when the transport has checked it already (a
   * revoked session, for the limits): `clientProcedure` throws it rather than check it again.
   */
  clientRefusal?: ApiError | undefined;
  /**
   * The SCIM caller (a directory's bearer token), when the transport has verified it already (once
   * per request, for the limits); `scimProcedure` verifies it otherwise.
   */
  directory?: { env: EnvironmentInfo; principal: DirectoryPrincipal } | undefined;
  /**
   * The admin token's id, when the transport has looked the token up already (once per request,
   * for the limits); `adminProcedure` looks it up otherwise.
   */
  adminTokenId?: string | undefined;
  /** Where the request came from, which a client token's session records (`noteSessionUse`). */
  device?: RequestDevice | undefined;
  /** The raw `x-elevated-access-token` header the widgets send on mutations once the user proved a code. */
  elevatedAccess?: string | undefined;
  /** Headers the procedures ask the transport to send (`Idempotent-Replayed: true` on a replay). */
  responseHeaders: Record<string, string>;
  /**
   * The operator console's cookie and CSRF header, when the request came with the cookie and no
   * `Authorization`: admin procedures accept them instead of an admin token (auth/console-session.ts).
   */
  console?: { session: string | undefined; csrf: string | undefined } | undefined;
  /**
   * The console session of `console`'s cookie, when the transport has looked it up already (once
   * per request, for the limits); `adminProcedure` then checks only its CSRF token.
   */
  consoleSession?: { id: string; adminTokenId: string; expiresAt: Date } | undefined;
}

export function createInnerContext(
  deps: Deps,
  authorization?: string,
  requestId?: string,
  idempotencyKey?: string,
  environment?: EnvironmentInfo,
): Context {
  return { deps, authorization, requestId, idempotencyKey, environment, responseHeaders: {} };
}
