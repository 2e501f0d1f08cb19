import type { AddressInfo } from 'node:net';
import type { Deps } from '@atrium/routers';
import { createSmtpMailer } from '@atrium/server';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { startOwnApp } from '../reliability/own-app.ts';
import { getWorld } from './world.ts';

/** One message as received, once per recipient. */
export interface ReceivedMail {
  to: string;
  subject: string;
  text: string;
}

/**
 * A real SMTP server on loopback (smtp-server, messages parsed by mailparser) that refuses the
 * recipients in `refusedForGood` with 550 and those in `refusedForNow` with 450 at RCPT TO, and
 * keeps every delivered message in `inbox`. Tests add and remove refused addresses as they go.
 */
export async function startLoopbackSmtp() {
  const refusedForGood = new Set<string>();
  const refusedForNow = new Set<string>();
  const inbox: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const refusal = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code });
      if (refusedForGood.has(address.address)) return callback(refusal(550, '5.1.1 No such mailbox'));
      if (refusedForNow.has(address.address)) return callback(refusal(450, '4.2.1 Mailbox busy, try later'));
      callback();
    },
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (mail) => {
          for (const rcpt of session.envelope.rcptTo) {
            inbox.push({ to: rcpt.address, subject: mail.subject ?? '', text: mail.text ?? '' });
          }
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    refusedForGood,
    refusedForNow,
    inbox,
    /** The addresses mail was delivered to, in order. */
    delivered: () => inbox.map((mail) => mail.to),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * An app of its own over the shared world's deps, with `quotas`, whose mailer sends through a
 * loopback SMTP server (nodemailer): for tests that read what was mailed.
 */
export async function startMailingApp(quotas: NonNullable<Deps['config']['quotas']>) {
  const smtp = await startLoopbackSmtp();
  const world = await getWorld();
  const app = await startOwnApp({
    ...world.deps,
    mailer: createSmtpMailer({ url: smtp.url, from: 'Acme <no-reply@acme.test>', timeoutMs: 5_000 }),
    config: { ...world.deps.config, quotas },
  });
  return {
    smtp,
    url: app.url,
    async close() {
      await app.close();
      await smtp.close();
    },
  };
}
