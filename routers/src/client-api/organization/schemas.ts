import { z } from 'zod';
import type { Organization } from '../../organizations/schemas.ts';

/** GraphQL's Organization (WIDGETS-API.md §4), also `client.organization`. */
export const ClientOrganization = z.object({
  id: z.string(),
  name: z.string(),
  allowProfilesOutsideOrganization: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ClientOrganization = z.infer<typeof ClientOrganization>;

export const toClientOrganization = (o: Organization): ClientOrganization => ({
  id: o.id,
  name: o.name,
  allowProfilesOutsideOrganization: o.allow_profiles_outside_organization,
  createdAt: o.created_at,
  updatedAt: o.updated_at,
});
