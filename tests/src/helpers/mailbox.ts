import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A real SMTP server on loopback that keeps every message it receives, parsed. */
export interface Mailbox {
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL or createSmtpMailer. */
  url: string;
  port: number;
  messages: ParsedMail[];
  /** The next message to arrive (or the oldest not yet taken). */
  next(): Promise<ParsedMail>;
  close(): Promise<void>;
}

export async function startMailbox(): Promise<Mailbox> {
  const messages: ParsedMail[] = [];
  let taken = 0;
  const waiting: Array<(mail: ParsedMail) => void> = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (mail) => {
          messages.push(mail);
          const wake = waiting.shift();
          if (wake) {
            taken += 1;
            wake(mail);
          }
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    next() {
      if (taken < messages.length) return Promise.resolve(messages[taken++] as ParsedMail);
      return new Promise((resolve) => waiting.push(resolve));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
