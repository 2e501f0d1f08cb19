import { adminRouter } from './admin/router.ts';
import { eventsRouter } from './events/router.ts';
import { organizationDomainsRouter } from './organization-domains/router.ts';
import { organizationsRouter } from './organizations/router.ts';
import { createCallerFactory, router } from './trpc.ts';
import { webhookEndpointsRouter } from './webhooks/router.ts';

/** Every procedure of the service. Resources with REST paths carry `meta.openapi`. */
export const appRouter = router({
  organizations: organizationsRouter,
  organizationDomains: organizationDomainsRouter,
  events: eventsRouter,
  webhookEndpoints: webhookEndpointsRouter,
  admin: adminRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);
