// Who calls: the principals a credential resolves to, and the checks services make of them.
import type { DirectoryState } from '@atrium/db';
import { ApiError, forbidden } from './errors.ts';
import type { Scope } from './scope.ts';

/**
 * The permissions the official widgets know (`@workos-inc/widgets` 1.18). A widget token carries
 * those its issuer asked for (`scopes`) that the user's roles grant; an operation-20 client token
 * those its membership's roles grant.
 */
export const WIDGET_SCOPES = [
  'widgets:users-table:manage',
  'widgets:domain-verification:manage',
  'widgets:sso:manage',
  'widgets:dsync:manage',
  'widgets:api-keys:manage',
  'widgets:user-api-keys:manage-self',
  'widgets:user-api-keys:manage-all',
  'widgets:audit-log-streaming:manage',
  'widgets:pipes:manage',
] as const;
export type WidgetScope = (typeof WIDGET_SCOPES)[number];

/** Who calls a client surface (`/_widgets/…`, `/client/graphql`, `/trpc/client.*`): a user in one organization. */
export interface ClientPrincipal {
  /**
   * `widgets`: from `POST /widgets/token`; `client`: from operation 20 (`POST /client/token`);
   * `portal`: an admin-portal session (issue #23), an organization's IT admin with no user.
   */
  kind: 'widgets' | 'client' | 'portal';
  organizationId: string;
  /**
   * The token's user; null for a portal session and a widget token issued without `user_id`
   * (`requireUser` refuses user operations there).
   */
  userId: string | null;
  /**
   * The token's `sid`: for `client` the stored user session it is bound to (revoking it ends the
   * token); for `widgets` the token's own id (`widget_session_…`, in no session list: a widget
   * token is not a session); for `portal` the portal session.
   */
  sessionId: string;
  permissions: readonly string[];
  expiresAt: Date;
}

/** What a client-surface service receives: a Scope of the token's environment, and the caller. */
export interface ClientScope extends Scope {
  client: ClientPrincipal;
}

/**
 * 403 unless the caller's token grants `permission` (the widgets show "Incorrect permissions").
 * `permissions` were read on this request (auth/client-token.ts): a widget token's are cut to what
 * its membership's roles grant now, so a demoted admin's token stops here.
 */
export function requirePermission(scope: ClientScope, permission: WidgetScope | string): void {
  if (!scope.client.permissions.includes(permission)) {
    throw forbidden('forbidden', `This token lacks the '${permission}' permission.`);
  }
}

/** The caller's user id; 403 for a caller without a user (an admin-portal session). */
export function requireUser(scope: ClientScope): string {
  if (scope.client.userId === null) throw forbidden('forbidden', 'This operation needs a token of a user.');
  return scope.client.userId;
}

/** The one refusal of a client credential that is missing, malformed, expired, revoked or of another kind. */
export const clientTokenRefused = () =>
  forbidden('invalid_client_token', 'Forbidden: a valid client or widget token is required.');

/**
 * Who calls the SCIM surface (`/scim/v2/<directory_id>/…`): an organization's identity provider,
 * holding one directory's bearer token (`scim_…`). It may read and write that directory only.
 */
export interface DirectoryPrincipal {
  kind: 'directory';
  directoryId: string;
  organizationId: string;
  /** The directory's state when its token was looked up (a write to a `deleting` one is refused). */
  state: DirectoryState;
}

/** What a SCIM service receives: a Scope of the directory's environment, and the directory. */
export interface DirectoryScope extends Scope {
  directory: DirectoryPrincipal;
}

/** The one refusal of a SCIM credential: missing, malformed, unknown, rotated, or of another directory. */
export const directoryTokenRefused = () =>
  new ApiError(401, 'unauthorized', 'Unauthorized: a valid SCIM bearer token of this directory is required.');
