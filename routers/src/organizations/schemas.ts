import { z } from 'zod';
import { Id, ListParams, listOf, Metadata, QueryList, StrictBoolean, Timestamp } from '../common/schemas.ts';
import { DomainDataEntry, OrganizationDomain } from '../domain-claims/schemas.ts';

export const Organization = z
  .object({
    object: z.literal('organization'),
    id: z.string(),
    name: z.string(),
    domains: z.array(OrganizationDomain),
    metadata: z.record(z.string(), z.string()),
    external_id: z.string().nullable(),
    billing_customer_id: z.string().nullable(),
    /**
     * The same stored value under upstream's newer name, which the Node SDK reads. Upstream declares
     * it an optional string, not a nullable one: absent while unset, never `null`.
     */
    stripe_customer_id: z.string().optional(),
    allow_profiles_outside_organization: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Organization' });
export type Organization = z.infer<typeof Organization>;

export const OrganizationList = listOf(Organization);

const Name = z.string().trim().min(1).max(256);
const ExternalId = z.string().min(1).max(128);

export const OrganizationIdInput = z.object({ id: Id });
export const ExternalIdInput = z.object({ external_id: z.string().min(1).max(128) });

export const ListOrganizationsInput = ListParams.extend({ domains: QueryList });

export const CreateOrganizationInput = z.object({
  name: Name,
  domain_data: z.array(DomainDataEntry).max(100).optional(),
  external_id: ExternalId.nullish(),
  metadata: Metadata.optional(),
  allow_profiles_outside_organization: StrictBoolean.optional(),
});

const BillingCustomerId = z.string().max(256);

/** Either name sets the one stored billing customer id; both, with different values, is 422. */
export const UpdateOrganizationInput = z.object({
  id: Id,
  name: Name.optional(),
  allow_profiles_outside_organization: StrictBoolean.optional(),
  domain_data: z.array(DomainDataEntry).max(100).optional(),
  billing_customer_id: BillingCustomerId.nullish(),
  /** Upstream's newer name for the billing customer id (the Node SDK sends it). */
  stripe_customer_id: BillingCustomerId.nullish(),
  metadata: z
    .record(z.string().min(1).max(40), z.string().max(600).nullable())
    .refine((value) => Object.keys(value).length <= 50, { message: 'metadata may hold at most 50 keys' })
    .optional(),
  external_id: ExternalId.nullish(),
});
