import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import dns2 from 'dns2';

const { Packet } = dns2;

/** What a name answers: its TXT values and NS host names, NXDOMAIN, or nothing at all (a server that never replies). */
export type DevDnsAnswer = { txt?: readonly string[]; ns?: readonly string[] } | 'nxdomain' | 'no-answer';

export interface DevDnsServer {
  port: number;
  /** `127.0.0.1:<port>`, the value for DNS_SERVERS. */
  address: string;
  /** Sets (or, with undefined, removes) the answer for a name. */
  set(name: string, answer: DevDnsAnswer | undefined): void;
  /** How many queries each name received. */
  queries: Map<string, number>;
  /** The source ports of each name's queries, in order (which process asked, tests/src/scale). */
  senders: Map<string, number[]>;
  close(): Promise<void>;
}

/**
 * A tiny authoritative DNS server on loopback (UDP), built on `dns2`: TXT and NS records for
 * local domain verification and for the tests. Unknown names answer NXDOMAIN; known names answer
 * their TXT or NS records (NOERROR with no answers for other types, or when they have none).
 */
export async function startDevDns(port = 0, host = '127.0.0.1'): Promise<DevDnsServer> {
  const answers = new Map<string, DevDnsAnswer>();
  const queries = new Map<string, number>();
  const senders = new Map<string, number[]>();
  const server = dns2.createUDPServer((request, send, rinfo) => {
    const response = Packet.createResponseFromRequest(request);
    const [question] = request.questions;
    if (!question) return void send(response);
    const name = question.name.toLowerCase().replace(/\.$/, '');
    queries.set(name, (queries.get(name) ?? 0) + 1);
    const port = 'port' in rinfo && typeof rinfo.port === 'number' ? rinfo.port : 0;
    senders.set(name, [...(senders.get(name) ?? []), port]);
    const answer = answers.get(name);
    if (answer === 'no-answer') return;
    if (answer === undefined || answer === 'nxdomain') {
      response.header.rcode = Packet.RCODE.NXDOMAIN;
      return void send(response);
    }
    // dns2's typings want a Resource instance; the encoder takes a plain record.
    const push = (record: object) => response.answers.push(record as (typeof response.answers)[number]);
    const base = { name: question.name, class: Packet.CLASS.IN, ttl: 1 };
    if (question.type === Packet.TYPE.TXT)
      for (const data of answer.txt ?? []) push({ ...base, type: question.type, data });
    if (question.type === Packet.TYPE.NS) for (const ns of answer.ns ?? []) push({ ...base, type: question.type, ns });
    return void send(response);
  });
  await server.listen(port, host);
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    address: `${host}:${bound}`,
    set(name, answer) {
      const key = name.toLowerCase().replace(/\.$/, '');
      if (answer === undefined) answers.delete(key);
      else answers.set(key, answer);
    },
    queries,
    senders,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** `name=value` of the command line, split at the first `=`. */
function pairOf(arg: string): [string, string] {
  const eq = arg.indexOf('=');
  if (eq <= 0) throw new Error(`expected <name>=<value>, got '${arg}'`);
  return [arg.slice(0, eq).toLowerCase(), arg.slice(eq + 1)];
}

/**
 * `npx tsx server/src/dev-dns.ts --port 5353 <name>=<value> … [--ns <name>=<host>] …`: serves
 * those TXT (and NS) records until stopped, e.g.
 * `atrium-domain-verification-1a2b3c.acme.com=<verification_token> --ns acme.com=ada.ns.cloudflare.com`.
 */
async function main(argv: string[]): Promise<void> {
  let port = 5353;
  const records = new Map<string, { txt: string[]; ns: string[] }>();
  const add = ([name, value]: [string, string], type: 'txt' | 'ns') => {
    const record = records.get(name) ?? { txt: [], ns: [] };
    record[type].push(value);
    records.set(name, record);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--port') port = Number(argv[++i]);
    else if (arg === '--ns') add(pairOf(argv[++i] ?? ''), 'ns');
    else add(pairOf(arg), 'txt');
  }
  const server = await startDevDns(port);
  for (const [name, record] of records) server.set(name, record);
  process.stdout.write(`DNS server on ${server.address} (set DNS_SERVERS=${server.address})\n`);
  for (const [name, { txt, ns }] of records) {
    if (txt.length > 0) process.stdout.write(`  ${name} TXT ${txt.map((t) => JSON.stringify(t)).join(' ')}\n`);
    if (ns.length > 0) process.stdout.write(`  ${name} NS ${ns.join(' ')}\n`);
  }
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
