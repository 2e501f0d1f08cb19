import { lazy, type Mailer, MailRecipientRefused } from '@atrium/routers';
import type { Transporter } from 'nodemailer';

export interface SmtpSettings {
  /** `smtp://user:pass@host:port` or `smtps://…` (nodemailer's connection URL). */
  url: string;
  /** The sender, e.g. `Acme <no-reply@acme.com>`. */
  from: string;
  /** Connection, greeting and socket timeouts: a send never holds a request longer. */
  timeoutMs?: number;
}

/** A mailer over SMTP (nodemailer): one transport, a connection per message (no pool to drain). */
export function createSmtpMailer(settings: SmtpSettings): Mailer {
  const timeout = settings.timeoutMs ?? 10_000;
  // nodemailer loads, and the transport is made, with the first message sent.
  const transport = lazy(async (): Promise<Transporter> => {
    const { createTransport } = await import('nodemailer');
    return createTransport(
      { url: settings.url, connectionTimeout: timeout, greetingTimeout: timeout, socketTimeout: timeout },
      { from: settings.from },
    );
  });
  return {
    async send(message) {
      try {
        await (await transport()).sendMail(message);
      } catch (error) {
        // nodemailer's EENVELOPE: the server refused the recipient; a 5xx reply is final (RFC 5321 4.2.1).
        const { code, responseCode, response } = error as { code?: string; responseCode?: number; response?: string };
        if (code === 'EENVELOPE' && responseCode !== undefined && responseCode >= 500 && responseCode < 600) {
          throw new MailRecipientRefused(message.to, response ?? String(responseCode));
        }
        throw error;
      }
    },
  };
}
