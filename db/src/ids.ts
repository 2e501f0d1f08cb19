import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/**
 * Every id prefix the service hands out. Ids are `<prefix><ULID>`; the ULID factory is
 * monotonic, so within a process id order is creation order (the contract's keyset rule).
 */
export const ID_PREFIXES = {
  environment: 'env_',
  apiKey: 'apikey_',
  adminToken: 'admintok_',
  consoleSession: 'console_session_',
  client: 'client_',
  organization: 'org_',
  organizationDomain: 'org_domain_',
  user: 'user_',
  organizationMembership: 'om_',
  invitation: 'invitation_',
  group: 'group_',
  role: 'role_',
  permission: 'perm_',
  connection: 'conn_',
  connectionDomain: 'conn_domain_',
  ssoAuthorization: 'sso_authorization_',
  ssoProfile: 'prof_',
  redirectUri: 'ruri_',
  directory: 'directory_',
  directoryUser: 'directory_user_',
  directoryGroup: 'directory_group_',
  itContact: 'it_contact_',
  organizationApiKey: 'api_key_',
  agentRegistration: 'agent_reg_',
  agentIdentity: 'agent_identity_',
  agentRegistrationClaim: 'agent_reg_claim_',
  agentRegistrationClaimCompletion: 'agent_reg_claim_completion_',
  agentApiKey: 'agent_key_',
  agentAccessToken: 'agent_at_',
  signingKey: 'key_',
  session: 'session_',
  sessionChallenge: 'auth_challenge_',
  /** A widget token's own id (its `sid`): not a stored session (client-tokens/service.ts). */
  widgetSession: 'widget_session_',
  event: 'event_',
  webhookEndpoint: 'we_',
  webhookDelivery: 'wd_',
  webhookAttempt: 'wa_',
  portalLink: 'portal_link_',
  portalSession: 'portal_session_',
  /** Upstream's examples: `ala_` for actions, `als_` for their schemas (list cursors). */
  auditLogAction: 'ala_',
  auditLogSchema: 'als_',
  auditLogEvent: 'audit_log_event_',
  auditLogExport: 'audit_log_export_',
  auditLogStream: 'audit_log_stream_',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/**
 * The ULID PRNG from a pool of OS randomness refilled 4 KiB at a time: the library's default asks
 * the OS once per character (bench/README.md, "Where the design's speed comes from").
 */
const pool = new Uint8Array(4096);
let poolAt = pool.length;
function pooledRandom(): number {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return (pool[poolAt++] as number) / 256;
}

const nextUlid = monotonicFactory(pooledRandom);

export function newId(kind: IdKind, now: number = Date.now()): string {
  return ID_PREFIXES[kind] + nextUlid(now);
}

/** The ULID part of an id, or null when the id does not carry the expected prefix. */
export function ulidOf(kind: IdKind, id: string): string | null {
  const prefix = ID_PREFIXES[kind];
  return id.startsWith(prefix) ? id.slice(prefix.length) : null;
}
