export { createFirstRunSecrets, type FirstRun } from './admin/first-run.ts';
export { registerAgent } from './agents/service.ts';
export { type AppRouter, appRouter, createCaller } from './app-router.ts';
export {
  type AuditLogExportDownload,
  buildNextAuditLogExport,
  EXPORT_CSV_COLUMNS,
  EXPORT_KEEP_MS,
  EXPORT_URL_TTL_MS,
  openAuditLogExportDownload,
  purgeExpiredAuditLogExports,
  seedAuditLogEvents,
  signedExportUrl,
} from './audit-logs/exports/service.ts';
export {
  AUDIT_LOG_CLOCK_SKEW_MS,
  createAuditLogEvent,
  createPortalAuditLogExport,
  DEFAULT_RETENTION_DAYS as DEFAULT_AUDIT_LOG_RETENTION_DAYS,
  portalAuditLogEvents,
  portalAuditLogExport,
  purgeExpiredAuditLogs,
} from './audit-logs/service.ts';
export {
  type AuditLogStreamRow,
  type OutgoingRequest,
  type PreparedBatch,
  prepareBatch,
  type RetryPolicy,
  requestFor,
  type StreamAttemptResult,
  settleBatch,
  takeDueStreams,
} from './audit-logs/streams/delivery.ts';
export { openStreamCredentials, sealStreamCredentials } from './audit-logs/streams/destinations.ts';
export { sharedKeySignature } from './audit-logs/streams/senders/azure-sentinel.ts';
export {
  deletePortalLogStream,
  getLogStream,
  type LogStreamView,
  pausePortalLogStream,
  portalLogStream,
  savePortalLogStream,
} from './audit-logs/streams/service.ts';
export {
  ADMIN_TOKEN,
  authenticateAdmin,
  configureAdminToken,
  createAdminToken,
  ensureAdminToken,
} from './auth/admin-token.ts';
export { apiKeyCache, authenticateApiKey, authenticateApiKeyWithId } from './auth/api-key.ts';
export { bearer } from './auth/bearer.ts';
export {
  authenticateClientBearer,
  authenticateClientToken,
  type ClientCaller,
  type ClientTokenGrant,
  verifyClientToken,
} from './auth/client-token.ts';
export {
  authenticateConsole,
  CONSOLE_SESSION_TTL_MS,
  type ConsoleCredentials,
  type ConsoleSession,
  consoleSessionOf,
  describeConsoleSession,
  signInToConsole,
  signOutOfConsole,
} from './auth/console-session.ts';
export { authenticateDirectoryToken, type DirectoryCaller, isDirectoryToken } from './auth/directory-token.ts';
export { portalCsrfMatches, portalCsrfToken, portalSessionOfCookie } from './auth/portal-session.ts';
export { nameServerProvider } from './client-api/domains/service.ts';
export type { GraphQLContext } from './client-api/graphql/builder.ts';
export { clientSchema } from './client-api/graphql/schema.ts';
export { purgeExpiredSessions, SESSION_RETENTION_MS } from './client-tokens/service.ts';
export { isoOfJson } from './common/schemas.ts';
export { createConnection } from './connections/service.ts';
export { type ConnectionRow, loadConnection } from './connections/store.ts';
export { type DirectoryGroupRole, setDirectoryGroupRole } from './directories/roles-mapping.ts';
export {
  createDirectory,
  deactivateDirectory,
  deleteDirectory,
  rotateDirectoryToken,
  scimBaseUrl,
} from './directories/service.ts';
export {
  createDirectoryGroup,
  createDirectoryUser,
  type DirectoryGroupFields,
  type DirectoryUserFields,
  deleteDirectoryGroup,
  deleteDirectoryUser,
  type MemberChange,
  replaceDirectoryUser,
  writeDirectoryGroup,
} from './directories/sync.ts';
export { createEnvironment, forgetEnvironment, listEnvironments, scopeOf } from './environments/service.ts';
export { recordEvent } from './events/record.ts';
export { EVENT_RETENTION_MS, purgeExpiredEvents, toEvent } from './events/service.ts';
export {
  beginIdempotentRequest,
  countExpiredIdempotencyKeys,
  IDEMPOTENCY_LOCK_MS,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyBegin,
  purgeExpiredIdempotencyKeys,
  requestFingerprint,
} from './idempotency/service.ts';
export { ProcessCache, type ProcessCacheSpec, processCache } from './invalidation/cache.ts';
export {
  applyInvalidation,
  INVALIDATION_CHANNEL,
  type InvalidationTopic,
  invalidationDown,
  invalidationUp,
  onInvalidation,
  publishInvalidation,
} from './invalidation/service.ts';
export {
  type Config,
  DEFAULT_CONFIG,
  DEFAULT_QUOTAS,
  DEFAULT_TOKEN_SETTINGS,
  type Quotas,
  type TokenConfig,
} from './kernel/config.ts';
export { type Context, createInnerContext, type RequestDevice } from './kernel/context.ts';
export {
  type Deps,
  type GeoLocation,
  type GeoLocator,
  type Mailer,
  type MailMessage,
  MailRecipientRefused,
  newCaches,
} from './kernel/deps.ts';
export {
  ApiError,
  contractError,
  type ErrorBody,
  type FieldError,
  serviceUnavailable,
  toApiError,
} from './kernel/errors.ts';
export {
  type ClientPrincipal,
  type ClientScope,
  clientTokenRefused,
  type DirectoryPrincipal,
  type DirectoryScope,
  directoryTokenRefused,
  requirePermission,
  requireUser,
  WIDGET_SCOPES,
  type WidgetScope,
} from './kernel/principals.ts';
export { reactions } from './kernel/reactions.ts';
export type { EnvironmentInfo, IdempotencyClaim, Scope } from './kernel/scope.ts';
export { FairPool, passwordPool } from './lib/hash-pool.ts';
export { lazy } from './lib/lazy.ts';
export { hashPassword, IMPORTED_HASH_BOUNDS, verifyPassword } from './lib/password.ts';
export { sameDigest, sha256Hex } from './lib/random.ts';
export {
  applyDnsResult,
  DEFAULT_VERIFICATION_PERIOD_SECONDS,
  type DnsCheckResult,
  type DueDomain,
  takeDueDomains,
  verifyOrganizationDomainManually,
} from './organization-domains/service.ts';
export { createOrganization, toOrganization } from './organizations/service.ts';
export {
  addPortalDirectory,
  addPortalDomain,
  issuePortalToken,
  type OpenedPortalLink,
  openPortalLink,
  PORTAL_DIRECTORY_TYPES,
  PORTAL_SCOPES,
  type PortalDirectory,
  type PortalDirectoryToken,
  type PortalStatus,
  portalStatus,
  rotatePortalDirectoryToken,
  SESSION_TTL_MS as PORTAL_SESSION_TTL_MS,
} from './portal/service.ts';
export type { LivePortalSession } from './portal/store.ts';
export { consumeSharedWindow, purgeIdleRateLimitWindows, type SharedCount } from './rate-limits/service.ts';
export { EXPIRED_RECORD_GRACE_MS, purgeExpiredRecords } from './retention/service.ts';
export { ERROR_SCHEMA as SCIM_ERROR_SCHEMA, scimStatusOf, scimTypeOf } from './scim/protocol.ts';
export { SCIM_ROUTES, type ScimRoute, scimRouter } from './scim/router.ts';
export { decryptPrivateKey, parseMasterKey } from './signing/material.ts';
export {
  jwksOfClient,
  rotateSigningKey,
  signingKeyCache,
  signToken,
  TOKEN_KINDS,
  type TokenKind,
  verifyToken,
} from './signing/service.ts';
export { SsoFailure, type SsoIdentity } from './sso/identity.ts';
export {
  configureOidcConnection,
  consumeOidcCallback,
  type OidcConfigInput,
  startOidc,
} from './sso/oidc/service.ts';
export {
  configurePortalSso,
  PORTAL_SSO_PROVIDERS,
  type PortalSsoConnection,
  portalSsoStatus,
  startPortalSso,
} from './sso/portal-setup.ts';
export { redirectUriProblem } from './sso/redirect-uris.ts';
export { ssoRouter } from './sso/router.ts';
export { checkSamlCertificates } from './sso/saml/certificates.ts';
export {
  CERTIFICATE_RENEWAL_WINDOW_DAYS,
  DEFAULT_ATTRIBUTE_NAMES,
  describeCertificate,
  isSamlType,
  parseIdpMetadata,
  SamlConfigInput,
} from './sso/saml/config.ts';
export {
  clockSkewMs,
  configureSamlConnection,
  consumeSamlResponse,
  DEFAULT_SSO_CLOCK_SKEW_SECONDS,
  samlMetadataXml,
  startSaml,
} from './sso/saml/service.ts';
export { hasAssertionId } from './sso/saml/store.ts';
export type { BrowserOutcome } from './sso/schemas.ts';
export {
  ACCESS_TOKEN_TTL_MS,
  AUTHORIZATION_TTL_MS,
  beginAuthorization,
  CODE_TTL_MS,
  completeSignIn,
  failSignIn,
  OAUTH_ERRORS,
  sweepSso,
  timeOutAuthorizations,
} from './sso/service.ts';
export { samlAcsUrl, samlSpEntityId, samlSpMetadataUrl } from './sso/urls.ts';
export type { Meta } from './trpc.ts';
export {
  callProcedure,
  type ProcedureEntry,
  procedureEntries,
  trpcErrorShape,
} from './trpc-adapter.ts';
export { apiErrorOf, asTRPCError, TRPCApiError, trpcContractError } from './trpc-errors.ts';
export {
  type AttemptOutcome,
  type DueDelivery,
  fanOutEvents,
  recordDeliveryAttempt,
  takeDueDeliveries,
} from './webhooks/deliveries.ts';
export { openWebhookSecret, sealLegacyWebhookSecrets } from './webhooks/service.ts';
export { type BusyTargets, releaseDeliveries } from './webhooks/store.ts';
export { hostOf, isPublicAddress, parseWebhookUrl, publicOnlyLookup } from './webhooks/url-policy.ts';
