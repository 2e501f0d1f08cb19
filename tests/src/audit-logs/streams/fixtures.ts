import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AuditLogStreamState,
  type AuditLogStreamType,
  auditLogEvents,
  auditLogStreams,
  newId,
  rawRows,
} from '@atrium/db';
import { sealStreamCredentials } from '@atrium/routers';
import aws4 from 'aws4';
import { sql } from 'drizzle-orm';
import S3rver from 's3rver';
import { generate } from 'selfsigned';
import { expect, vi } from 'vitest';
import type { TestEnvironment } from '../../helpers/world.ts';

/**
 * A stream row written straight to the table, its credentials sealed as the setup service seals
 * them (the setup side, routers/src/audit-logs/streams/service.ts, is written separately).
 */
export async function insertStream(
  env: TestEnvironment,
  organizationId: string,
  type: AuditLogStreamType,
  config: Record<string, unknown>,
  credentials: object,
  extra: { state?: AuditLogStreamState; deliveredThrough?: string } = {},
) {
  const id = newId('auditLogStream');
  const [row] = await env.deps.db
    .insert(auditLogStreams)
    .values({
      id,
      environmentId: env.environmentId,
      organizationId,
      type,
      config,
      credentials: sealStreamCredentials(env.deps.tokens.masterKey, id, credentials),
      state: extra.state ?? 'active',
      deliveredThrough: extra.deliveredThrough ?? null,
    })
    .returning();
  return row as typeof auditLogStreams.$inferSelect;
}

/** Records `count` audit log events of the organization (each its own transaction), ids in order. */
export async function recordEvents(env: TestEnvironment, organizationId: string, count: number, at: Date) {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await recordEvent(env, organizationId, at, newId('auditLogEvent')));
  return ids;
}

/** An event's row (the writer under test decides how and when to insert it). */
export function eventRow(env: TestEnvironment, organizationId: string, at: Date, id: string) {
  return {
    id,
    environmentId: env.environmentId,
    organizationId,
    action: 'user.signed_in',
    occurredAt: at,
    actor: { id: 'user_1', type: 'user', name: 'Ada' },
    targets: [{ id: 'team_1', type: 'team' }],
    context: { location: '203.0.113.7', user_agent: 'test' },
    metadata: { seq: id },
    createdAt: at,
  };
}

/** Records one event with the given id (a test may pass an id made earlier: the ordering hazard). */
export async function recordEvent(env: TestEnvironment, organizationId: string, at: Date, id: string) {
  await env.deps.db.insert(auditLogEvents).values(eventRow(env, organizationId, at, id));
  await settled(env, id);
  return id;
}

/**
 * Waits until the event's transaction is below every running transaction's (the worker delivers
 * only those): at once on PGlite; on a PostgreSQL shared with other test runs, a transaction of
 * another database of the cluster holds the watermark back for a moment.
 */
export async function settled(env: TestEnvironment, id: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const [row] = await rawRows<{ below: boolean }>(
        env.deps.db,
        sql`select tx_id < pg_snapshot_xmin(pg_current_snapshot()) as below from audit_log_events where id = ${id}`,
      );
      expect(row?.below).toBe(true);
    },
    { timeout: 30_000, interval: 20 },
  );
}

export interface SinkRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A loopback receiver: `check` answers each request (n counts every request, 0-based) with a
 * status; the requests answered 2xx are kept in `accepted`.
 */
export class Sink {
  readonly requests: SinkRequest[] = [];
  readonly accepted: SinkRequest[] = [];
  private server: Server | undefined;
  url = '';

  constructor(
    private readonly check: (req: SinkRequest, n: number) => number | Promise<number>,
    private readonly tls?: { key: string; cert: string },
  ) {}

  async start(): Promise<this> {
    const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        const received = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        const n = this.requests.length;
        this.requests.push(received);
        const status = await this.check(received, n);
        if (status >= 200 && status < 300) this.accepted.push(received);
        res.statusCode = status;
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ status }));
      });
    };
    this.server = this.tls ? createHttpsServer(this.tls, handler) : createHttpServer(handler);
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const port = (this.server.address() as AddressInfo).port;
    this.url = `${this.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** A self-signed certificate for 127.0.0.1, made in the test: the worker is told to trust it (`ca`). */
export async function selfSignedCertificate(): Promise<{ key: string; cert: string }> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  } as never);
  return { key: pems.private, cert: pems.cert };
}

/**
 * Checks an AWS Signature V4 (`Authorization: AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/s3/
 * aws4_request, SignedHeaders=..., Signature=...`) by signing the same request again with the secret
 * the test knows, over the headers the request says it signed; and the payload hash against the body.
 */
export function sigV4Problem(req: SinkRequest, accessKeyId: string, secretAccessKey: string): string | null {
  const auth = String(req.headers.authorization ?? '');
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/\d{8}\/([^/]+)\/s3\/aws4_request, SignedHeaders=([^,]+), Signature=[0-9a-f]{64}$/.exec(
      auth,
    );
  if (!match) return 'malformed Authorization';
  if (match[1] !== accessKeyId) return 'unknown access key';
  const sha = createHash('sha256').update(req.body).digest('hex');
  if (req.headers['x-amz-content-sha256'] !== sha) return 'payload hash mismatch';
  const headers: Record<string, string> = {};
  for (const name of (match[3] as string).split(';')) {
    if (name !== 'host') headers[name] = String(req.headers[name] ?? '');
  }
  const again = aws4.sign(
    {
      host: String(req.headers.host),
      path: req.url,
      method: req.method,
      service: 's3',
      region: match[2],
      headers,
      body: req.body,
    },
    { accessKeyId, secretAccessKey },
  );
  return again.headers?.Authorization === auth ? null : 'signature mismatch';
}

/** An S3-compatible server (s3rver) on loopback, with its buckets, in a temporary directory. */
export async function startS3rver(buckets: string[]) {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-s3rver-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name, configs: [] })),
  });
  const { port } = await server.run();
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    /** The keys stored under the bucket (`GET /<bucket>?list-type=2`, anonymous: s3rver allows it). */
    async list(bucket: string): Promise<string[]> {
      const xml = await (await fetch(`${url}/${bucket}?list-type=2`)).text();
      return [...xml.matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1] as string);
    },
    async read(bucket: string, key: string): Promise<string> {
      return (await fetch(`${url}/${bucket}/${key}`)).text();
    },
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** Forwards a request as received to `target` (the verifying proxy in front of s3rver). */
export function forward(target: string, req: SinkRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const out = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    out.on('error', reject);
    out.end(req.body);
  });
}
