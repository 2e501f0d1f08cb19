import type { Scope } from '../context.ts';
import { forbidden } from '../errors.ts';

export { WIDGET_SCOPES, type WidgetScope } from '../client-tokens/schemas.ts';

import type { WidgetScope } from '../client-tokens/schemas.ts';

/** Who calls a client surface (`/_widgets/…`, `/client/graphql`, `/trpc/client.*`): a user in one organization. */
export interface ClientPrincipal {
  /** `widgets`: from `POST /widgets/token`; `client`: from operation 20 (`POST /client/token`). */
  kind: 'widgets' | 'client';
  organizationId: string;
  userId: string;
  /** The stored session the token is bound to (`sid`); revoking it ends the token. */
  sessionId: string;
  permissions: readonly string[];
  expiresAt: Date;
}

/** What a client-surface service receives: a Scope of the token's environment, and the caller. */
export interface ClientScope extends Scope {
  client: ClientPrincipal;
}

/** 403 unless the caller's token grants `permission` (the widgets show "Incorrect permissions"). */
export function requirePermission(scope: ClientScope, permission: WidgetScope | string): void {
  if (!scope.client.permissions.includes(permission)) {
    throw forbidden('forbidden', `This token lacks the '${permission}' permission.`);
  }
}

/** The one refusal of a client credential that is missing, malformed, expired, revoked or of another kind. */
export const clientTokenRefused = () =>
  forbidden('invalid_client_token', 'Forbidden: a valid client or widget token is required.');
