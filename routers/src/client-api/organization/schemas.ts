import { z } from 'zod';

/** GraphQL's Organization (WIDGETS-API.md §4), also `client.organization`. */
export const ClientOrganization = z.object({
  id: z.string(),
  name: z.string(),
  allowProfilesOutsideOrganization: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ClientOrganization = z.infer<typeof ClientOrganization>;
