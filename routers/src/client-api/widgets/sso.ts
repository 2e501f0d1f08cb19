import { z } from 'zod';
import { clientProcedure } from '../../trpc.ts';
import { CONNECTION_STATES, listWidgetSsoConnections } from '../sso/service.ts';

const X509 = z.object({ id: z.string(), value: z.string(), notBefore: z.string(), notAfter: z.string() });
const LastSession = z.object({
  id: z.string(),
  createdAt: z.string(),
  state: z.enum(['Started', 'Successful', 'Failed', 'Timedout']),
});
const WidgetConnectionBase = {
  id: z.string(),
  name: z.string(),
  createdAt: z.string(),
  state: z.enum(CONNECTION_STATES),
  lastSession: LastSession.nullable(),
};

/** 2.2 SsoConnection, keyed by `providerTag`, `type` only from the widget's lists. */
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

/** The SSO connection widget (WIDGETS-API.md 2, row 18): a bare array. */
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
    .query(({ ctx }) => listWidgetSsoConnections(ctx.scope)),
};
