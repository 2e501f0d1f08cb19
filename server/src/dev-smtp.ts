import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A real SMTP server on loopback that keeps every message it receives, parsed. */
export interface DevSmtpServer {
  port: number;
  /** `smtp://127.0.0.1:<port>`, the value for SMTP_URL. */
  url: string;
  messages: ParsedMail[];
  /** The oldest message not yet taken, waiting for one if none is. */
  next(): Promise<ParsedMail>;
  close(): Promise<void>;
}

/**
 * A tiny SMTP server (`smtp-server`, messages parsed by `mailparser`) for local invitation mail and
 * for the tests: no TLS, no authentication, every recipient accepted. `onMessage` sees each message
 * before the server answers the client, so a sender that has finished has been seen.
 */
export async function startDevSmtp(
  port = 0,
  host = '127.0.0.1',
  onMessage?: (mail: ParsedMail) => void,
): Promise<DevSmtpServer> {
  const messages: ParsedMail[] = [];
  const waiting: Array<(mail: ParsedMail) => void> = [];
  let taken = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (mail) => {
          messages.push(mail);
          onMessage?.(mail);
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
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.server.address() as AddressInfo).port;
  return {
    port: bound,
    url: `smtp://${host}:${bound}`,
    messages,
    next() {
      if (taken < messages.length) return Promise.resolve(messages[taken++] as ParsedMail);
      return new Promise((resolve) => waiting.push(resolve));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** `npm run dev-smtp -- --port 2525`: prints each message received (recipient, subject, text) until stopped. */
async function main(argv: string[]): Promise<void> {
  let port = 2525;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--port') port = Number(argv[++i]);
    else throw new Error(`unknown argument '${argv[i]}' (only --port PORT)`);
  }
  const server = await startDevSmtp(port, '127.0.0.1', (mail) => {
    const to = Array.isArray(mail.to) ? mail.to.map((a) => a.text).join(', ') : (mail.to?.text ?? '');
    process.stdout.write(`To: ${to}\nSubject: ${mail.subject ?? ''}\n\n${(mail.text ?? '').trim()}\n\n`);
  });
  process.stdout.write(`SMTP server on 127.0.0.1:${server.port} (set SMTP_URL=${server.url})\n`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
