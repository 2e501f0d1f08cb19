import { z } from 'zod';
import { DOMAIN_STATES, NAME_SERVERS } from './service.ts';

/**
 * A domain of the token's organization on the client surfaces: GraphQL's `OrganizationDomain`
 * (`client.domains.*`) as it is, and the domain verification widget's REST shape without
 * `organizationId` (WIDGETS-API.md §2.2): one definition for both wires.
 */
export const ClientDomain = z.object({
  id: z.string(),
  organizationId: z.string(),
  domain: z.string(),
  state: z.enum(DOMAIN_STATES),
  nameServer: z.enum(NAME_SERVERS),
  verificationPrefix: z.string().nullable(),
  verificationToken: z.string().nullable(),
  subdomain: z.string().nullable(),
  createdAt: z.string(),
});

/** The widget's shape: the same fields in the same order, `organizationId` left out. */
export const WidgetDomain = ClientDomain.omit({ organizationId: true });
