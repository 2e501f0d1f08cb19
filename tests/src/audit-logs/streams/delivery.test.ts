import { randomBytes } from 'node:crypto';
import { type AuditLogStreamType, auditLogEvents, auditLogStreams, newId } from '@atrium/db';
import { createAuditLogEvent, scopeOf, sharedKeySignature } from '@atrium/routers';
import { LogStreamWorker, type LogStreamWorkerOptions } from '@atrium/server';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { getWorld, newEnvironment, type TestEnvironment } from '../../helpers/world.ts';
import {
  eventRow,
  forward,
  insertStream,
  recordEvent,
  recordEvents,
  Sink,
  type SinkRequest,
  selfSignedCertificate,
  settled,
  sigV4Problem,
  startS3rver,
} from './fixtures.ts';

/** What a test asks of a receiver: a forced status for the n-th request, or null to check and accept it. */
type Forced = (n: number) => number | null;

interface Receiving {
  config: Record<string, unknown>;
  credentials: object;
  /** Ids of the events the destination holds, in the order it got them. */
  delivered(): Promise<string[]>;
  /** Requests that reached the receiver. */
  requests(): number;
  close(): Promise<void>;
}

let tls: { key: string; cert: string };
let s3: Awaited<ReturnType<typeof startS3rver>>;
const BUCKET = 'audit-logs';
const GCS_BUCKET = 'audit-logs-gcs';
const S3_KEY = { access_key_id: 'S3RVER', secret_access_key: 'S3RVER' };

const idsOfArray = (req: SinkRequest) => (JSON.parse(req.body) as { id: string }[]).map((e) => e.id);

/** A sink whose check first applies `forced`, then `verify` (null: accepted, else its status). */
function sinkWith(forced: Forced, verify: (req: SinkRequest) => number | null, withTls = false) {
  return new Sink((req, n) => forced(n) ?? verify(req) ?? 200, withTls ? tls : undefined).start();
}

/** A verifying proxy in front of s3rver: checks the SigV4 signature, then stores through s3rver. */
async function objectStore(forced: Forced, bucket: string, region: string): Promise<Receiving & { sink: Sink }> {
  const sink = await new Sink(async (req, n) => {
    const status = forced(n);
    if (status !== null) return status;
    if (req.method !== 'PUT') return 405;
    if (!String(req.headers.authorization).includes(`/${region}/s3/aws4_request`)) return 403;
    if (sigV4Problem(req, S3_KEY.access_key_id, S3_KEY.secret_access_key)) return 403;
    return forward(s3.url, req);
  }).start();
  return {
    sink,
    config: {},
    credentials: S3_KEY,
    async delivered() {
      const prefix = `atrium/${sink.url.split(':').at(-1)}/`;
      const keys = (await s3.list(bucket)).filter((key) => key.startsWith(prefix)).sort();
      const ids: string[] = [];
      for (const key of keys) {
        expect(key).toMatch(/^atrium\/\d+\/\d{4}\/\d{2}\/\d{2}\/audit_log_event_\w+-audit_log_event_\w+\.jsonl$/);
        const lines = (await s3.read(bucket, key)).trim().split('\n');
        ids.push(...lines.map((line) => (JSON.parse(line) as { id: string }).id));
      }
      return ids;
    },
    requests: () => sink.requests.length,
    close: () => sink.close(),
  };
}

const DESTINATIONS: Record<AuditLogStreamType, (forced: Forced) => Promise<Receiving>> = {
  async GenericHttps(forced) {
    const sink = await sinkWith(
      forced,
      (req) => {
        if (req.headers['x-audit-token'] !== 'generic-secret') return 401;
        if (req.headers['content-type'] !== 'application/json') return 415;
        const events = JSON.parse(req.body) as { object: string }[];
        return Array.isArray(events) && events.every((e) => e.object === 'audit_log_event') ? null : 400;
      },
      true,
    );
    return {
      config: { url: `${sink.url}/ingest` },
      credentials: { headers: { 'X-Audit-Token': 'generic-secret' } },
      delivered: async () => sink.accepted.flatMap(idsOfArray),
      requests: () => sink.requests.length,
      close: () => sink.close(),
    };
  },
  async Datadog(forced) {
    const sink = await sinkWith(forced, (req) => {
      if (req.url !== '/api/v2/logs') return 404;
      if (req.headers['dd-api-key'] !== 'dd-key') return 403;
      const logs = JSON.parse(req.body) as { ddsource: string; service: string; message: string }[];
      return logs.every((log) => log.ddsource === 'atrium' && log.service && JSON.parse(log.message).id) ? null : 400;
    });
    return {
      config: { site: 'datadoghq.com', url: sink.url },
      credentials: { api_key: 'dd-key' },
      delivered: async () =>
        sink.accepted.flatMap((req) =>
          (JSON.parse(req.body) as { message: string }[]).map((log) => JSON.parse(log.message).id as string),
        ),
      requests: () => sink.requests.length,
      close: () => sink.close(),
    };
  },
  async Splunk(forced) {
    const sink = await sinkWith(forced, (req) => {
      if (req.url !== '/services/collector/event') return 404;
      if (req.headers.authorization !== 'Splunk hec-token') return 401;
      const lines = req.body.split('\n').map((line) => JSON.parse(line));
      const wellFormed = lines.every(
        (l) =>
          typeof l.time === 'number' && l.event?.object === 'audit_log_event' && l.index === 'main' && l.sourcetype,
      );
      return wellFormed ? null : 400;
    });
    return {
      config: { url: sink.url, index: 'main' },
      credentials: { token: 'hec-token' },
      delivered: async () =>
        sink.accepted.flatMap((req) => req.body.split('\n').map((line) => JSON.parse(line).event.id as string)),
      requests: () => sink.requests.length,
      close: () => sink.close(),
    };
  },
  async S3(forced) {
    const store = await objectStore(forced, BUCKET, 'us-east-1');
    const port = store.sink.url.split(':').at(-1);
    return {
      ...store,
      config: { bucket: BUCKET, region: 'us-east-1', prefix: `atrium/${port}`, endpoint: store.sink.url },
    };
  },
  async GoogleCloudStorage(forced) {
    const store = await objectStore(forced, GCS_BUCKET, 'auto');
    const port = store.sink.url.split(':').at(-1);
    return { ...store, config: { bucket: GCS_BUCKET, prefix: `atrium/${port}`, endpoint: store.sink.url } };
  },
  async AzureSentinel(forced) {
    const key = randomBytes(32).toString('base64');
    const sink = await sinkWith(forced, (req) => {
      if (req.url !== '/api/logs?api-version=2016-04-01') return 404;
      if (req.headers['log-type'] !== 'AtriumAudit') return 400;
      const date = String(req.headers['x-ms-date']);
      const expected = `SharedKey ws-1:${sharedKeySignature(key, Buffer.byteLength(req.body), date)}`;
      return req.headers.authorization === expected ? null : 403;
    });
    return {
      config: { workspace_id: 'ws-1', log_type: 'AtriumAudit', url: sink.url },
      credentials: { shared_key: key },
      delivered: async () => sink.accepted.flatMap(idsOfArray),
      requests: () => sink.requests.length,
      close: () => sink.close(),
    };
  },
};

const open: Receiving[] = [];

beforeAll(async () => {
  await getWorld();
  tls = await selfSignedCertificate();
  s3 = await startS3rver([BUCKET, GCS_BUCKET]);
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

afterAll(async () => {
  await s3?.close();
});

async function streamRow(env: TestEnvironment, id: string) {
  const [row] = await env.deps.db.select().from(auditLogStreams).where(eq(auditLogStreams.id, id));
  return row as typeof auditLogStreams.$inferSelect;
}

/** A stream of `type` to a fresh receiver, a clock, and a worker for this environment only. */
async function setUp(type: AuditLogStreamType, forced: Forced = () => null, options: LogStreamWorkerOptions = {}) {
  const env = await newEnvironment();
  const org = await env.caller.organizations.create({ name: `Streams ${type}` });
  const receiving = await DESTINATIONS[type](forced);
  open.push(receiving);
  const stream = await insertStream(env, org.id, type, receiving.config, receiving.credentials);
  const clock = { now: new Date() };
  const worker = new LogStreamWorker(env.deps, {
    allowPrivate: true,
    environmentId: env.environmentId,
    now: () => clock.now,
    random: () => 0.5,
    retryBaseMs: 1_000,
    ca: tls.cert,
    ...options,
  });
  /** One tick, its batches awaited; the number of streams taken. */
  const run = async () => {
    const taken = await worker.tick();
    await worker.drain();
    return taken;
  };
  return { env, org, receiving, stream, clock, worker, run };
}

describe.each(Object.keys(DESTINATIONS) as AuditLogStreamType[])('log stream to %s', (type) => {
  it('delivers a batch of events, in order, and moves the cursor to the last', async () => {
    const { env, org, receiving, stream, clock, run } = await setUp(type);
    const ids = await recordEvents(env, org.id, 3, clock.now);

    expect(await run()).toBe(1);
    expect(await receiving.delivered()).toEqual(ids);
    const row = await streamRow(env, stream.id);
    expect(row).toMatchObject({ deliveredThrough: ids[2], attempts: 0, state: 'active', lastError: null });
    expect(row.lastStatusCode).toBeGreaterThanOrEqual(200);

    // Due again at once: nothing new, so nothing is sent and the stream rests for a while.
    expect(await run()).toBe(1);
    expect(receiving.requests()).toBe(1);
    expect(await run()).toBe(0);
  });

  it('retries a failure with backoff, the cursor unmoved in between, nothing lost or duplicated', async () => {
    const { env, org, receiving, stream, clock, run } = await setUp(type, (n) => (n === 0 ? 500 : null));
    const first = await recordEvents(env, org.id, 2, clock.now);

    expect(await run()).toBe(1);
    expect(await receiving.delivered()).toEqual([]);
    const failed = await streamRow(env, stream.id);
    expect(failed).toMatchObject({ deliveredThrough: null, attempts: 1, state: 'active', lastStatusCode: 500 });
    expect(failed.lastError).toBe('the destination answered HTTP 500');
    expect(failed.nextAttemptAt?.getTime()).toBeGreaterThan(clock.now.getTime());
    // Not due before its retry time.
    expect(await run()).toBe(0);

    const later = await recordEvents(env, org.id, 1, clock.now);
    clock.now = failed.nextAttemptAt as Date;
    expect(await run()).toBe(1);
    expect(await receiving.delivered()).toEqual([...first, ...later]);
    expect(await streamRow(env, stream.id)).toMatchObject({
      deliveredThrough: later[0],
      attempts: 0,
      lastError: null,
      state: 'active',
    });
  });

  it('never reaches a private address unless allowed', async () => {
    const { env, org, receiving, stream, clock, run } = await setUp(type, () => null, { allowPrivate: false });
    await recordEvents(env, org.id, 1, clock.now);

    expect(await run()).toBe(1);
    expect(receiving.requests()).toBe(0);
    const row = await streamRow(env, stream.id);
    expect(row).toMatchObject({ deliveredThrough: null, attempts: 1, state: 'active', lastStatusCode: null });
    expect(row.lastError).toBe('refused: private, loopback or link-local address');
  });

  it('a 401 from the destination makes the stream invalid, and it is not retried', async () => {
    const { env, org, receiving, stream, clock, run } = await setUp(type, () => 401);
    await recordEvents(env, org.id, 1, clock.now);

    expect(await run()).toBe(1);
    const row = await streamRow(env, stream.id);
    expect(row).toMatchObject({ state: 'invalid', deliveredThrough: null, lastStatusCode: 401, nextAttemptAt: null });
    clock.now = new Date(clock.now.getTime() + 24 * 60 * 60 * 1000);
    expect(await run()).toBe(0);
    expect(receiving.requests()).toBe(1);
  });
});

describe('log stream delivery rules', () => {
  it('an event whose id was made earlier but committed after a delivered one is still delivered', async () => {
    const { env, org, receiving, stream, clock, run } = await setUp('GenericHttps');
    const early = newId('auditLogEvent');
    const [late] = await recordEvents(env, org.id, 1, clock.now);
    expect(early < (late as string)).toBe(true);

    expect(await run()).toBe(1);
    expect((await streamRow(env, stream.id)).deliveredThrough).toBe(late);

    // The slower writer commits now: its id sorts before the cursor, its transaction after it.
    await recordEvent(env, org.id, clock.now, early);
    expect(await run()).toBe(1);
    expect(await receiving.delivered()).toEqual([late, early]);
    expect((await streamRow(env, stream.id)).deliveredThrough).toBe(early);
  });

  it('events written together by group commit (one statement, one transaction) are all delivered, in id order', async () => {
    const { env, org, receiving, stream, run } = await setUp('GenericHttps');
    const scope = await scopeOf(env.deps, env.environmentId);
    const at = new Date(Date.now() - 60_000).toISOString();
    const event = (n: number) => ({
      action: 'user.signed_in',
      occurred_at: at,
      actor: { id: `user_${n}`, type: 'user' },
      targets: [{ id: 'team_1', type: 'team' }],
      context: { location: '203.0.113.7' },
    });
    // The first goes alone; the others arrive while it is in flight and go as one INSERT.
    await Promise.all(
      Array.from({ length: 12 }, (_, n) => createAuditLogEvent(scope, { organization_id: org.id, event: event(n) })),
    );
    const rows = await env.deps.db
      .select({ id: auditLogEvents.id, txId: auditLogEvents.txId })
      .from(auditLogEvents)
      .where(eq(auditLogEvents.organizationId, org.id));
    expect(rows).toHaveLength(12);
    // Some of them share a transaction: the batch's.
    expect(new Set(rows.map((row) => String(row.txId))).size).toBeLessThan(12);
    for (const row of rows) await settled(env, row.id);

    expect(await run()).toBe(1);
    const inOrder = [...rows]
      .sort((a, b) =>
        BigInt(a.txId) === BigInt(b.txId) ? (a.id < b.id ? -1 : 1) : BigInt(a.txId) < BigInt(b.txId) ? -1 : 1,
      )
      .map((row) => row.id);
    expect(await receiving.delivered()).toEqual(inOrder);
    expect((await streamRow(env, stream.id)).deliveredThrough).toBe(inOrder.at(-1));
  });

  // Two writers at once need two connections: PGlite has one.
  it.runIf(Boolean(inject('databaseUrl')))(
    'an event still being written holds back those committed after it began, then both go in commit order (PostgreSQL)',
    async () => {
      const { env, org, receiving, stream, clock, run } = await setUp('GenericHttps');
      const early = newId('auditLogEvent');
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let begun = () => {};
      const written = new Promise<void>((resolve) => {
        begun = resolve;
      });
      const slow = env.deps.db.transaction(async (tx) => {
        await tx.insert(auditLogEvents).values(eventRow(env, org.id, clock.now, early));
        begun();
        await gate;
      });
      await written;
      const late = newId('auditLogEvent');
      await env.deps.db.insert(auditLogEvents).values(eventRow(env, org.id, clock.now, late));

      // The later event is committed, but an earlier writer is still open: nothing is sent.
      expect(await run()).toBe(1);
      expect(receiving.requests()).toBe(0);
      expect((await streamRow(env, stream.id)).deliveredThrough).toBeNull();

      release();
      await slow;
      await settled(env, late);
      clock.now = new Date(clock.now.getTime() + 60_000);
      expect(await run()).toBe(1);
      expect(await receiving.delivered()).toEqual([early, late]);
    },
  );

  it('a host name that resolves to loopback is refused at connect time unless allowed', async () => {
    const { env, org, receiving, stream, clock, run } = await setUp('GenericHttps', () => null, {
      allowPrivate: false,
    });
    const port = new URL(receiving.config.url as string).port;
    await env.deps.db
      .update(auditLogStreams)
      .set({ config: { url: `https://localhost:${port}/ingest` } })
      .where(eq(auditLogStreams.id, stream.id));
    await recordEvents(env, org.id, 1, clock.now);

    expect(await run()).toBe(1);
    expect(receiving.requests()).toBe(0);
    expect((await streamRow(env, stream.id)).lastError).toBe('refused: private, loopback or link-local address');
  });

  it('after the retry budget the stream is in error and no longer attempted', async () => {
    const { env, org, receiving, stream, clock, run } = await setUp('Splunk', () => 503, {
      maxAgeMs: 10_000,
      retryBaseMs: 2_000,
    });
    await recordEvents(env, org.id, 1, clock.now);

    await vi.waitFor(
      async () => {
        await run();
        const row = await streamRow(env, stream.id);
        if (row.nextAttemptAt) clock.now = row.nextAttemptAt;
        expect(row.state).toBe('error');
      },
      { timeout: 10_000, interval: 0 },
    );
    const row = await streamRow(env, stream.id);
    expect(row).toMatchObject({ deliveredThrough: null, lastStatusCode: 503, nextAttemptAt: null });
    expect(row.attempts).toBe(receiving.requests());
    expect(row.lastError).not.toContain('hec-token');
    expect(await run()).toBe(0);
  });

  it('a paused stream is not taken, and a batch carries at most batchSize events in order', async () => {
    const { env, org, receiving, stream, clock, run } = await setUp('Datadog', () => null, { batchSize: 2 });
    const ids = await recordEvents(env, org.id, 5, clock.now);
    await env.deps.db.update(auditLogStreams).set({ state: 'inactive' }).where(eq(auditLogStreams.id, stream.id));
    expect(await run()).toBe(0);

    await env.deps.db.update(auditLogStreams).set({ state: 'active' }).where(eq(auditLogStreams.id, stream.id));
    expect(await run()).toBe(1);
    expect(await run()).toBe(1);
    expect(await run()).toBe(1);
    expect(receiving.requests()).toBe(3);
    expect(await receiving.delivered()).toEqual(ids);
  });
});
