import type { PageParams } from '@atrium/db';
import { wireTime } from '../../common/schemas.ts';
import { notFound } from '../../kernel/errors.ts';
import { type ClientScope, requirePermission } from '../../kernel/principals.ts';
import {
  createOrganizationDomain,
  deleteOrganizationDomain,
  getOrganizationDomain,
  listOrganizationDomains,
  verifyOrganizationDomain,
} from '../../organization-domains/service.ts';
import type { DomainRow } from '../../organization-domains/store.ts';
import { quotaLimit } from '../../quotas.ts';

export const DOMAIN_STATES = ['Failed', 'LegacyVerified', 'Pending', 'Verified'] as const;
export const NAME_SERVERS = ['AwsRoute53', 'CloudFlare', 'GoDaddy', 'GoogleDomains', 'Other'] as const;

/** A domain as the widgets (REST), GraphQL and `client.domains.*` show it (WIDGETS-API.md §2.2, §4). */
export interface ClientDomain {
  id: string;
  organizationId: string;
  domain: string;
  state: (typeof DOMAIN_STATES)[number];
  nameServer: (typeof NAME_SERVERS)[number];
  subdomain: string | null;
  verificationPrefix: string | null;
  verificationToken: string | null;
  createdAt: string;
}

const STATE = { pending: 'Pending', verified: 'Verified', failed: 'Failed' } as const;

/** The DNS hosts whose name servers the widgets know by name (their provider icon), by host suffix. */
const PROVIDERS: [suffix: RegExp, provider: ClientDomain['nameServer']][] = [
  [/\.awsdns-\d+\.[a-z.]+$/, 'AwsRoute53'],
  [/\.ns\.cloudflare\.com$/, 'CloudFlare'],
  [/\.domaincontrol\.com$/, 'GoDaddy'],
  [/\.googledomains\.com$/, 'GoogleDomains'],
];

/**
 * The DNS provider of a domain by the name servers the DNS worker found for it: a known one when
 * every name server is that provider's, else (none found yet, several providers, any other host)
 * `Other`.
 */
export function nameServerProvider(hosts: readonly string[] | null): ClientDomain['nameServer'] {
  const providers = new Set(
    (hosts ?? []).map((host) => PROVIDERS.find(([suffix]) => suffix.test(host))?.[1] ?? 'Other'),
  );
  const [only] = providers;
  return providers.size === 1 && only !== undefined ? only : 'Other';
}

/**
 * The client shape of a domain. The widget's DNS dialog shows a TXT record at host `subdomain`
 * with value `<verificationPrefix>=<verificationToken>`: Atrium's record lives at
 * `<verification_prefix>.<domain>` and the worker accepts `verification_token=<token>`, so the
 * prefix is the subdomain and `verification_token` the value's key. A domain verified without
 * DNS (`manual`: domain_data, the admin console) is `LegacyVerified`.
 */
export function toClientDomain(d: DomainRow): ClientDomain {
  const state = d.state === 'verified' && d.verificationStrategy === 'manual' ? 'LegacyVerified' : STATE[d.state];
  return {
    id: d.id,
    organizationId: d.organizationId,
    domain: d.domain,
    state,
    nameServer: nameServerProvider(d.nameServers),
    subdomain: d.verificationPrefix,
    verificationPrefix: 'verification_token',
    verificationToken: d.verificationToken,
    createdAt: wireTime(d.createdAt),
  };
}

const PERMISSION = 'widgets:domain-verification:manage';

/** The domain of the token's organization, or 404 as if absent (another organization's too). */
async function ownDomain(scope: ClientScope, id: string): Promise<ClientDomain> {
  requirePermission(scope, PERMISSION);
  const domain = await getOrganizationDomain(scope, id, toClientDomain);
  if (domain.organizationId !== scope.client.organizationId) throw notFound('organization_domain', id);
  return domain;
}

/** A page of the organization's domains; without `params`, all of them (at most the domain quota). */
export async function listDomains(scope: ClientScope, params?: PageParams) {
  requirePermission(scope, PERMISSION);
  const page = params ?? { limit: quotaLimit(scope.deps, 'domainsPerOrganization'), order: 'desc' };
  const list = await listOrganizationDomains(scope, scope.client.organizationId, page, toClientDomain);
  return { data: list.data, list_metadata: list.list_metadata };
}

export async function getDomain(scope: ClientScope, id: string): Promise<ClientDomain> {
  return ownDomain(scope, id);
}

/**
 * Adds a domain to the token's organization and starts its DNS verification at once, as the
 * widgets expect of an added domain (events `organization_domain.created`, then `.updated`).
 */
export async function addDomain(scope: ClientScope, domain: string): Promise<ClientDomain> {
  requirePermission(scope, PERMISSION);
  const organizationId = scope.client.organizationId;
  const created = await createOrganizationDomain(scope, { organization_id: organizationId, domain }, (row) => row.id);
  return verifyOrganizationDomain(scope, created, toClientDomain);
}

/** Removes a domain of the organization (event `organization_domain.deleted`); the domain as it was. */
export async function removeDomain(scope: ClientScope, id: string): Promise<ClientDomain> {
  await ownDomain(scope, id);
  return deleteOrganizationDomain(scope, id, toClientDomain);
}

/**
 * "Restart verification": only a failed domain restarts (back to pending, checked now, a new
 * verification period, event `organization_domain.updated`); a pending or verified one is
 * 409 `domain_not_failed` and nothing changes.
 */
export async function reverifyDomain(scope: ClientScope, id: string): Promise<ClientDomain> {
  await ownDomain(scope, id);
  return verifyOrganizationDomain(scope, id, toClientDomain, { onlyFailed: true });
}
