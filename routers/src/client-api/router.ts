import { clientProcedure, router } from '../trpc.ts';
// h22/domains: domain verification and SSO connections.
import { domainsClientProcedures, domainsWidgetProcedures } from './domains/router.ts';
import { organizationsClientProcedures, organizationsWidgetProcedures } from './organizations/router.ts';
import { ssoClientProcedures, ssoWidgetProcedures } from './sso/router.ts';

/**
 * The client surfaces' procedures, authorized by client and widget tokens (`clientProcedure`),
 * confined to the token's organization and user. Each area adds its procedures here.
 */

/** `/_widgets/…`: the REST API the official WorkOS Widgets call, with their exact paths and shapes. */
export const widgetsRouter = router({
  ...organizationsWidgetProcedures,
  // h22/domains
  ...domainsWidgetProcedures,
  ...ssoWidgetProcedures,
});

/** `client.*` over `/trpc`: typed tRPC for TypeScript frontends, the operations of `/client/graphql`. */
export const clientRouter = router({
  status: clientProcedure.query(() => 'ok' as const),
  ...organizationsClientProcedures,
  // h22/domains
  ...domainsClientProcedures,
  ...ssoClientProcedures,
});
