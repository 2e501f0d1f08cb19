import { z } from 'zod';
import { clientProcedure } from '../../trpc.ts';
import { CONNECTION_STATES, listSsoConnections, toWidgetConnection } from '../sso/service.ts';

const X509 = z.object({ id: z.string(), value: z.string() });
const WidgetConnectionBase = {
  id: z.string(),
  name: z.string(),
  createdAt: z.string(),
  state: z.enum(CONNECTION_STATES),
  lastSession: z.null(),
};

/** §2.2 SsoConnection, keyed by `providerTag`, `type` only from the widget's lists. */
const WidgetConnection = z.discriminatedUnion('providerTag', [
  z.object({
    ...WidgetConnectionBase,
    providerTag: z.literal('Saml'),
    type: z.string(),
    x509Certificates: z.array(X509),
    latestExpiringCertificate: X509.nullable(),
    latestExpiredCertificate: X509.nullable(),
  }),
  z.object({ ...WidgetConnectionBase, providerTag: z.literal('OpenIdConnect'), type: z.string() }),
]);

/** The SSO connection widget (WIDGETS-API.md §2, row 18): a bare array. */
export const ssoWidgetProcedures = {
  ssoConnections: clientProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/_widgets/admin-portal/sso-connections',
        tags: ['Widgets'],
        summary: "The organization's SSO connections (AdminPortalSsoConnection)",
      },
    })
    .input(z.object({}))
    .output(z.array(WidgetConnection))
    .query(async ({ ctx }) => (await listSsoConnections(ctx.scope)).map(toWidgetConnection)),
};
