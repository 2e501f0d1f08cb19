import { ClientIntent } from '../admin-portal/service.ts';
import type { ClientBuilder } from './builder.ts';
import { procedures } from './caller.ts';

/** `createAdminPortalLink` (issue #23). */
export function adminPortalTypes(builder: ClientBuilder) {
  const AdminPortalLinkIntent = builder.enumType('AdminPortalLinkIntent', { values: ClientIntent.options });

  const AdminPortalLink = builder
    .objectRef<{ link: string; intent: ClientIntent; expiresAt: string }>('AdminPortalLink')
    .implement({
      fields: (t) => ({
        link: t.exposeString('link'),
        intent: t.expose('intent', { type: AdminPortalLinkIntent }),
        expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
      }),
    });

  builder.mutationField('createAdminPortalLink', (t) =>
    t.field({
      type: AdminPortalLink,
      args: { intent: t.arg({ type: AdminPortalLinkIntent, required: true }) },
      resolve: (_root, args, ctx) => procedures.adminPortal.createLink(ctx, { intent: args.intent }),
    }),
  );
}
