import { DOMAIN_FAILURE_REASONS, DOMAIN_STATES, VERIFICATION_STRATEGIES } from '@atrium/db';
import { z } from 'zod';
import { Timestamp } from '../common/schemas.ts';

export const OrganizationDomain = z
  .object({
    object: z.literal('organization_domain'),
    id: z.string(),
    organization_id: z.string(),
    domain: z.string(),
    state: z.enum(DOMAIN_STATES),
    verification_strategy: z.enum(VERIFICATION_STRATEGIES),
    verification_prefix: z.string(),
    verification_token: z.string(),
    verification_failed_reason: z.enum(DOMAIN_FAILURE_REASONS).nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'OrganizationDomain' });
export type OrganizationDomain = z.infer<typeof OrganizationDomain>;

/** A `domain_data` entry of organization create and update. */
export const DomainDataEntry = z.object({
  domain: z.string().min(1).max(253),
  state: z.enum(['pending', 'verified']),
});
export type DomainDataEntry = z.infer<typeof DomainDataEntry>;
