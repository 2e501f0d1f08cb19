export { banner } from './banner.ts';
export { type AdminClient, type CliIo, createAdminClient, runCli } from './cli.ts';
export { loadConfig, resolveMasterKey, type ServerConfig } from './config.ts';
export { type DevDnsAnswer, type DevDnsServer, startDevDns } from './dev-dns.ts';
export { type DevSmtpServer, startDevSmtp } from './dev-smtp.ts';
export { createSmtpMailer, type SmtpSettings } from './mailer.ts';
export { createDeps, createLogger, type Runtime, startRuntime } from './runtime.ts';
export { createDnsResolver, type DnsResolver, VerificationWorker } from './workers/verification.ts';
export { postSigned, WebhookWorker, type WebhookWorkerOptions } from './workers/webhooks.ts';
