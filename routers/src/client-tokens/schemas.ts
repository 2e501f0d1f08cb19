import { z } from 'zod';
import { Id } from '../common/schemas.ts';

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

export const CreateClientTokenInput = z.object({ organization_id: Id, user_id: Id });

/**
 * `widgets.createToken`: the scopes are the permissions the official widgets know. As upstream's
 * `WidgetSessionTokenDto`: `organization_id` required, `user_id` and `scopes` optional.
 */
export const CreateWidgetTokenInput = z.object({
  organization_id: Id,
  user_id: Id.optional(),
  scopes: z.array(z.enum(WIDGET_SCOPES)).max(WIDGET_SCOPES.length).default([]),
});

export const ClientToken = z.object({ token: z.string() }).meta({ id: 'ClientToken' });
export type ClientToken = z.infer<typeof ClientToken>;
