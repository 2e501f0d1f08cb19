export { banner } from './banner.ts';
export { runCli } from './cli.ts';
export { type AdminClient, type CliIo, createAdminClient } from './cli-context.ts';
export { loadConfig, resolveMasterKey, type ServerConfig } from './config.ts';
export { capConnectionsPerAddress, type HttpBounds, serverOptions } from './connections.ts';
export { type DevDnsAnswer, type DevDnsServer, startDevDns } from './dev-dns.ts';
export {
  type DevIdp,
  type DevIdpUser,
  makeSamlIdpKey,
  readAuthnRequest,
  type SamlIdpKey,
  type SamlResponseFields,
  samlId,
  samlResponseXml,
  signAssertion,
  signResponse,
  startDevIdp,
} from './dev-idp.ts';
export { type DevSmtpServer, startDevSmtp } from './dev-smtp.ts';
export { openGeoLocator } from './geo.ts';
export { createSmtpMailer, type SmtpSettings } from './mailer.ts';
export { createDeps, createLogger, type Runtime, startRuntime } from './runtime.ts';
export { auditLogExportsWorker } from './workers/audit-log-exports.ts';
export { type GuardedRequest, type GuardOptions, sendGuarded } from './workers/guarded-http.ts';
export { LogStreamWorker, type LogStreamWorkerOptions } from './workers/log-streams.ts';
export { retentionSweep, retentionWorker } from './workers/retention.ts';
export { statisticsCheck, statisticsWorker } from './workers/statistics.ts';
export { createDnsResolver, type DnsResolver, VerificationWorker } from './workers/verification.ts';
export { postSigned, WebhookWorker, type WebhookWorkerOptions } from './workers/webhooks.ts';
