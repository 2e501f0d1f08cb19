import { z } from 'zod';
import { Id } from '../common/schemas.ts';
import { WIDGET_SCOPES } from '../kernel/principals.ts';

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
