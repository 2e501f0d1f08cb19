import { z } from 'zod';
import { Id } from '../common/schemas.ts';

export { OrganizationDomain } from '../domain-claims/schemas.ts';

export const DomainIdInput = z.object({ id: Id });

export const CreateOrganizationDomainInput = z.object({
  domain: z.string().min(1).max(253),
  organization_id: Id,
});
