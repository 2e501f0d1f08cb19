import { randomUUID } from 'node:crypto';
import { newId, PORTAL_INTENTS, type PortalIntent } from '@atrium/db';
import { organizationDirectories, organizationDirectory } from '../directories/overview.ts';
import { CreateDirectoryInput, type DirectoryWithToken } from '../directories/schemas.ts';
import { createDirectory, rotateDirectoryToken, scimBaseUrl } from '../directories/service.ts';
import type { Deps } from '../kernel/deps.ts';
import { forbidden, invalid, invalidOfZod } from '../kernel/errors.ts';
import type { WidgetScope } from '../kernel/principals.ts';
import type { Scope } from '../kernel/scope.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import { toOrganizationDomain } from '../organization-domains/claims.ts';
import type { OrganizationDomain } from '../organization-domains/schemas.ts';
import { createOrganizationDomain, verifyOrganizationDomain } from '../organization-domains/service.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { getOrganization } from '../organizations/service.ts';
import { signToken } from '../signing/service.ts';
import { portalLinkMessage } from './mail.ts';
import type { GeneratePortalLinkInput, PortalLink } from './schemas.ts';
import {
  consumePortalLink,
  findPortalLink,
  insertPortalLink,
  insertPortalSession,
  type LivePortalSession,
  livePortalSession,
} from './store.ts';

/** A link is single-use and valid this long; the session it opens lasts `SESSION_TTL_MS`. */
export const LINK_TTL_MS = 5 * 60_000;
export const SESSION_TTL_MS = 30 * 60_000;

/**
 * Reading the organization's SSO connections and nothing else: the SSO page is read-only. Not an
 * upstream widget scope (a widget token cannot ask for it); only a portal session holds it.
 */
export const PORTAL_SSO_READ = 'portal:sso:read';

/**
 * Reading the organization's audit log events and exporting them: the audit_logs page's own
 * scope. No widget reads events, so nothing accepts a token holding it; the page reads and exports
 * with the cookie and CSRF token (routers/src/audit-logs/service.ts `portalAuditLogEvents`).
 */
export const PORTAL_AUDIT_LOGS_READ = 'portal:audit-logs:read';

/**
 * The permission a portal session of each intent holds: exactly what its page does. The domain
 * page lists, re-verifies and removes domains (and adds them), so it holds the widget's manage
 * scope (WIDGETS-API.md §3); the SSO page only shows the connection, so it holds `PORTAL_SSO_READ`;
 * the directory page's widget reads the organization's directories (`widgets:dsync:manage`: the
 * DirectorySync routes only read), and the page itself creates and rotates with the cookie. The
 * log stream page's widget reads the stream (`widgets:audit-log-streaming:manage`); the page
 * writes it with the cookie (routers/src/audit-logs/streams/service.ts). The audit log page has no
 * widget: its session holds `PORTAL_AUDIT_LOGS_READ`.
 */
export const PORTAL_SCOPES: Record<PortalIntent, WidgetScope | typeof PORTAL_SSO_READ | typeof PORTAL_AUDIT_LOGS_READ> =
  {
    domain_verification: 'widgets:domain-verification:manage',
    sso: PORTAL_SSO_READ,
    dsync: 'widgets:dsync:manage',
    log_streams: 'widgets:audit-log-streaming:manage',
    audit_logs: PORTAL_AUDIT_LOGS_READ,
  };

/** Upstream intents Atrium does not serve yet (each is refused with its own message). */
const UPSTREAM_INTENTS = ['certificate_renewal', 'bring_your_own_key'];

/** The intent a link is asked for, or the 422 that says why it cannot be served. */
export function requireServedIntent(intent: string | undefined): PortalIntent {
  if ((PORTAL_INTENTS as readonly string[]).includes(intent ?? '')) return intent as PortalIntent;
  const served = PORTAL_INTENTS.join(', ');
  const message = UPSTREAM_INTENTS.includes(intent ?? '')
    ? `The admin portal intent '${intent}' is not available in Atrium yet; served intents: ${served}.`
    : `intent must be one of: ${served}.`;
  const code = UPSTREAM_INTENTS.includes(intent ?? '') ? 'intent_not_supported' : 'invalid_intent';
  throw invalid([{ field: 'intent', code, message }], code, message);
}

/** Where portal links point: this server's public base URL (the tokens' issuer). */
function portalBase(deps: Deps): string {
  return deps.tokens.issuer.replace(/\/+$/, '');
}

export interface IssuedPortalLink extends PortalLink {
  intent: PortalIntent;
  expiresAt: Date;
}

/**
 * A single-use link to the admin portal of an organization of the caller's environment (404
 * otherwise), valid `LINK_TTL_MS`; only the SHA-256 of its secret is stored. The secret rides
 * in `apiToken`, the query parameter the official widgets turn into a form POST.
 */
export async function createPortalLink(
  scope: Scope,
  input: Omit<GeneratePortalLinkInput, 'intent'> & { intent: PortalIntent },
): Promise<IssuedPortalLink> {
  const organization = await requireOrganization(scope.db, scope, input.organization);
  const secret = randomBase62(43);
  const now = scope.now();
  const expiresAt = new Date(now.getTime() + LINK_TTL_MS);
  await insertPortalLink(scope.db, {
    id: newId('portalLink'),
    environmentId: scope.env.id,
    organizationId: organization.id,
    intent: input.intent,
    secretHash: sha256Hex(secret),
    returnUrl: input.return_url ?? null,
    successUrl: input.success_url ?? null,
    expiresAt,
    createdAt: now,
  });
  const link = `${portalBase(scope.deps)}/portal/launch?apiToken=${secret}`;
  await mailPortalLink(scope, input.admin_emails ?? [], link, input.intent, organization.name);
  return { link, intent: input.intent, expiresAt };
}

/**
 * What a widget inside a portal page gets when it asks for a link ("Add domain", "Manage"): the
 * session's own page, so a portal token never mints a link or a session, and the tab it opens
 * shares the session (its cookie, return links and expiry). Another intent's page is 403.
 */
export async function ownPortalPage(scope: Scope, sessionId: string, intent: PortalIntent): Promise<IssuedPortalLink> {
  const live = await livePortalSession(scope.db, sessionId, scope.now());
  if (live?.session.intent !== intent) {
    throw forbidden('forbidden', `This admin portal session may not open the '${intent}' page.`);
  }
  return { link: `${portalBase(scope.deps)}/portal/${intent}`, intent, expiresAt: live.session.expiresAt };
}

/** `POST /portal/generate_link` (SDK `adminPortal.generateLink`): `{ link }`. */
export async function generatePortalLink(scope: Scope, input: GeneratePortalLinkInput): Promise<PortalLink> {
  const intent = requireServedIntent(input.intent);
  const { link } = await createPortalLink(scope, { ...input, intent });
  return { link };
}

/** Mails the link to each admin when a mailer is configured; a failure is logged, never thrown. */
async function mailPortalLink(scope: Scope, to: string[], link: string, intent: string, organizationName: string) {
  const mailer = scope.deps.mailer;
  if (!mailer) return;
  for (const email of new Set(to)) {
    try {
      await mailer.send(portalLinkMessage(email, link, intent, organizationName));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      scope.deps.log.warn({ reason }, 'the admin portal e-mail could not be sent');
    }
  }
}

/** What opening a link gives: a session (its cookie value), or why not. */
export type OpenedPortalLink =
  | { kind: 'opened'; cookie: string; intent: PortalIntent; expiresAt: Date }
  | { kind: 'used' | 'expired' | 'unknown' };

/**
 * Exchanges a link's secret for a portal session, in one transaction: the link is marked used
 * (one opener wins) and the session stored, bound to the link's organization and intent.
 */
export async function openPortalLink(deps: Deps, secret: string): Promise<OpenedPortalLink> {
  if (!/^[0-9A-Za-z]{20,64}$/.test(secret)) return { kind: 'unknown' };
  const secretHash = sha256Hex(secret);
  const now = deps.now();
  const opened = await deps.db.transaction(async (tx) => {
    const link = await consumePortalLink(tx, secretHash, now);
    if (!link) return undefined;
    const sessionSecret = randomBase62(43);
    const id = newId('portalSession');
    const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
    await insertPortalSession(tx, {
      id,
      environmentId: link.environmentId,
      organizationId: link.organizationId,
      intent: link.intent,
      secretHash: sha256Hex(sessionSecret),
      returnUrl: link.returnUrl,
      successUrl: link.successUrl,
      expiresAt,
      createdAt: now,
    });
    return { kind: 'opened' as const, cookie: `${id}.${sessionSecret}`, intent: link.intent, expiresAt };
  });
  if (opened) return opened;
  const link = await findPortalLink(deps.db, secretHash);
  if (!link) return { kind: 'unknown' };
  return { kind: link.usedAt ? 'used' : 'expired' };
}

/**
 * A client-kind token for the portal principal of a live session: `sid` = the portal session,
 * `permissions` = its intent's scope, no user; it lives no longer than the session.
 */
export async function issuePortalToken(deps: Deps, live: LivePortalSession): Promise<{ token: string }> {
  const { session, env } = live;
  const left = Math.floor((session.expiresAt.getTime() - deps.now().getTime()) / 1000);
  const ttl = Math.max(1, Math.min(deps.tokens.clientTokenTtlSeconds, 15 * 60, left));
  const claims = {
    sub: session.id,
    org_id: session.organizationId,
    sid: session.id,
    permissions: [PORTAL_SCOPES[session.intent]],
    jti: randomUUID(),
  };
  const signed = await signToken(deps, env, 'client', claims, ttl);
  return { token: signed.token };
}

/** A directory as the dsync page shows it: never its token. */
export interface PortalDirectory {
  id: string;
  name: string;
  type: string;
  state: string;
  users: { active: number; inactive: number };
  groups: number;
  /** The identity provider's last SCIM write, or null before its first. */
  lastSyncAt: string | null;
  scimBaseUrl: string;
}

/**
 * What the portal page shows and polls: the organization's domains and where "done" leads; on the
 * dsync page, its directories too.
 */
export interface PortalStatus {
  intent: PortalIntent;
  organizationName: string;
  successUrl: string | null;
  domains: { id: string; domain: string; state: string; record: { type: 'TXT'; name: string; value: string } }[];
  directories?: PortalDirectory[];
}

/** The organization's directories for the dsync page (the directories resource reads them). */
async function portalDirectories(scope: Scope, organizationId: string): Promise<PortalDirectory[]> {
  return (await organizationDirectories(scope, organizationId)).map(({ directory, lastSyncAt }) => ({
    id: directory.id,
    name: directory.name,
    type: directory.type,
    state: directory.state,
    users: directory.metadata.users,
    groups: directory.metadata.groups,
    lastSyncAt,
    scimBaseUrl: scimBaseUrl(scope.deps, directory.id),
  }));
}

/** The portal session's organization as its page shows it (the organizations service reads it). */
export async function portalStatus(deps: Deps, live: LivePortalSession): Promise<PortalStatus> {
  const scope = scopeOfSession(deps, live);
  const organization = await getOrganization(scope, live.session.organizationId);
  const directories =
    live.session.intent === 'dsync' ? { directories: await portalDirectories(scope, organization.id) } : {};
  return {
    intent: live.session.intent,
    organizationName: organization.name,
    successUrl: live.session.successUrl,
    ...directories,
    domains: organization.domains.map((d) => ({
      id: d.id,
      domain: d.domain,
      state: d.state,
      record: {
        type: 'TXT' as const,
        name: `${d.verification_prefix}.${d.domain}`,
        value: `verification_token=${d.verification_token}`,
      },
    })),
  };
}

/** The Scope of a portal session: its environment, for the services it calls. */
const scopeOfSession = (deps: Deps, live: LivePortalSession): Scope => ({
  db: deps.db,
  env: live.env,
  now: deps.now,
  deps,
});

/**
 * The portal's "Add a domain": the organizations domains service creates the domain for the
 * session's organization (its rules: 422 invalid or consumer domain, 409 taken) and starts its
 * DNS verification, so the worker checks it. Only a domain_verification session may (else 403).
 */
export async function addPortalDomain(
  deps: Deps,
  live: LivePortalSession,
  domain: unknown,
): Promise<OrganizationDomain> {
  if (live.session.intent !== 'domain_verification') {
    throw forbidden('forbidden', 'This admin portal session may not add domains.');
  }
  if (typeof domain !== 'string') {
    throw invalid([{ field: 'domain', code: 'domain_required', message: 'domain is required.' }]);
  }
  const scope = scopeOfSession(deps, live);
  const input = { organization_id: live.session.organizationId, domain };
  const created = await createOrganizationDomain(scope, input, (row) => row.id);
  return verifyOrganizationDomain(scope, created, toOrganizationDomain);
}

/** The directory types the dsync page sets up, each with its own steps there (web/src/portal/directories.ts). */
export const PORTAL_DIRECTORY_TYPES = ['okta scim v2.0', 'azure scim v2.0', 'generic scim v2.0'] as const;

/** What the dsync page shows once, after a create or a rotation: the directory, its SCIM base URL and token. */
export interface PortalDirectoryToken {
  id: string;
  name: string;
  type: string;
  state: string;
  scim_base_url: string;
  bearer_token: string;
}

const tokenShown = (d: DirectoryWithToken): PortalDirectoryToken => ({
  id: d.id,
  name: d.name,
  type: d.type,
  state: d.state,
  scim_base_url: d.scim_base_url,
  bearer_token: d.bearer_token,
});

function requireDsync(live: LivePortalSession): void {
  if (live.session.intent !== 'dsync') {
    throw forbidden('forbidden', 'This admin portal session may not manage directories.');
  }
}

/**
 * The dsync page's "Create directory": a directory of the session's organization of one of
 * PORTAL_DIRECTORY_TYPES (422 otherwise), named 1-256 characters; its token is in this answer only.
 * Only a dsync session may (else 403).
 */
export async function addPortalDirectory(
  deps: Deps,
  live: LivePortalSession,
  body: unknown,
): Promise<PortalDirectoryToken> {
  requireDsync(live);
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (!(PORTAL_DIRECTORY_TYPES as readonly unknown[]).includes(fields.type)) {
    const message = `type must be one of: ${PORTAL_DIRECTORY_TYPES.join(', ')}.`;
    throw invalid([{ field: 'type', code: 'invalid_directory_type', message }], 'invalid_directory_type', message);
  }
  const parsed = CreateDirectoryInput.safeParse({
    organization_id: live.session.organizationId,
    type: fields.type,
    name: fields.name,
  });
  if (!parsed.success) throw invalidOfZod(parsed.error);
  return tokenShown(await createDirectory(scopeOfSession(deps, live), parsed.data));
}

/**
 * The dsync page's "Rotate token": a new SCIM token for a directory of the session's organization
 * (another organization's, or a missing one, is 404); the old token stops working at once.
 */
export async function rotatePortalDirectoryToken(
  deps: Deps,
  live: LivePortalSession,
  id: string,
): Promise<PortalDirectoryToken> {
  requireDsync(live);
  const scope = scopeOfSession(deps, live);
  await organizationDirectory(scope, live.session.organizationId, id);
  return tokenShown(await rotateDirectoryToken(scope, id));
}
