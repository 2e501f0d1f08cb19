import { randomUUID } from 'node:crypto';
import { idempotencyKeys } from '@atrium/db';
import { beginIdempotentRequest, purgeExpiredIdempotencyKeys, requestFingerprint } from '@atrium/routers';
import { WorkOS } from '@workos-inc/node';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { makeFixture, OPERATIONS, snapshot } from './catalog.ts';
import { startOwnApp } from './own-app.ts';

const creates = OPERATIONS.filter((op) => op.creates);

async function expire(env: TestEnvironment, key: string, field: 'expiresAt' | 'lockedUntil') {
  await env.deps.db
    .update(idempotencyKeys)
    .set({ [field]: new Date(Date.now() - 1_000) })
    .where(and(eq(idempotencyKeys.environmentId, env.environmentId), eq(idempotencyKeys.key, key)));
}

/**
 * The fingerprint the key of a REST POST is bound to: its procedure's path (the operation id of
 * the OpenAPI document) and the procedure's raw input (the body and the path parameters).
 */
async function fingerprintOf(env: TestEnvironment, path: string, body: Record<string, unknown>): Promise<string> {
  const document = (await env.http.get('/openapi.json')).body as {
    paths: Record<string, { post?: { operationId: string } }>;
  };
  for (const [template, operations] of Object.entries(document.paths)) {
    if (!operations.post) continue;
    const names: string[] = [];
    const pattern = template.replace(/\{(\w+)\}/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    const match = new RegExp(`^${pattern}$`).exec(path);
    if (!match) continue;
    const params = Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(match[i + 1] ?? '')]));
    return requestFingerprint(operations.post.operationId.replaceAll('-', '.'), { ...body, ...params });
  }
  throw new Error(`no POST route matches ${path}`);
}

type Fault = 'refused' | 'lost';

/**
 * The worker's database, failing every write as a database that has gone away does: `refused`
 * before the write, `lost` after it committed (the connection dies before the answer, as a crash
 * would). Both write paths fail: transactions, and one-statement writes on the driver's client.
 */
function faulty(db: TestEnvironment['deps']['db'], fault: Fault): TestEnvironment['deps']['db'] {
  const error = () =>
    fault === 'refused'
      ? Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
      : Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  const failing =
    <A extends unknown[]>(run: (...args: A) => Promise<unknown>) =>
    async (...args: A) => {
      if (fault === 'lost') await run(...args);
      throw error();
    };
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'transaction') return failing(target.transaction.bind(target) as never);
      if (prop === '$client') {
        const client = Reflect.get(target, prop, receiver) as Record<string, unknown>;
        return new Proxy(client, {
          get(c, name) {
            const method = Reflect.get(c, name);
            if ((name === 'unsafe' || name === 'query') && typeof method === 'function') {
              return failing(async (...args: unknown[]) => await method.apply(c, args));
            }
            return method;
          },
        });
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

describe.each(creates)('Idempotency-Key on $name', (op) => {
  const table = op.creates!.table;
  const success = op.creates!.status ?? 201;

  it('replays the first response byte for byte and stores one record', async () => {
    const env = await newEnvironment();
    const f = await makeFixture(env);
    const before = await snapshot(env);
    const body = op.creates!.validBody(f);
    const key = randomUUID();
    const first = await env.http.post(op.path(f), body, { 'Idempotency-Key': key });
    expect(first.status, first.text).toBe(success);
    const second = await env.http.post(op.path(f), body, { 'Idempotency-Key': key });
    expect(second.status).toBe(first.status);
    expect(second.text).toBe(first.text);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const after = await snapshot(env);
    expect(after[table]).toBe((before[table] ?? 0) + 1);
  });

  it('answers 409 idempotency_key_reused for the same key with another body, storing nothing', async () => {
    const env = await newEnvironment();
    const f = await makeFixture(env);
    const key = randomUUID();
    const first = await env.http.post(op.path(f), op.creates!.validBody(f), { 'Idempotency-Key': key });
    expect(first.status, first.text).toBe(success);
    const before = await snapshot(env);
    const otherBody = { ...op.creates!.validBody(f), note: 'another request' };
    const other = await env.http.post(op.path(f), otherBody, { 'Idempotency-Key': key });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 'idempotency_key_reused' });
    expect(await snapshot(env)).toEqual(before);
  });

  it('answers 409 while the first request with the key is still running', async () => {
    const env = await newEnvironment();
    const f = await makeFixture(env);
    const key = randomUUID();
    const body = op.creates!.validBody(f);
    // The first request holds the key (as a request in progress does).
    const begun = await beginIdempotentRequest(
      env.deps,
      env.environmentId,
      key,
      await fingerprintOf(env, op.path(f), body),
    );
    expect(begun.kind).toBe('proceed');
    const before = await snapshot(env);
    const second = await env.http.post(op.path(f), body, { 'Idempotency-Key': key });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ code: 'idempotency_key_reused' });
    expect(await snapshot(env)).toEqual(before);
    // A holder that died (its lock ran out) is taken over by the retry.
    await expire(env, key, 'lockedUntil');
    const retried = await env.http.post(op.path(f), body, { 'Idempotency-Key': key });
    expect(retried.status).toBe(success);
  });

  it('lets 30 concurrent retries with one key make exactly one record and answer one response', async () => {
    const env = await newEnvironment();
    const f = await makeFixture(env);
    const before = await snapshot(env);
    const body = op.creates!.validBody(f);
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 30 }, () => env.http.post(op.path(f), body, { 'Idempotency-Key': key })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    const ok = responses.filter((r) => r.status === success);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.text)).size).toBe(1);
    for (const r of responses.filter((r) => r.status !== success)) {
      expect(r.status).toBe(409);
      expect(r.body.code).toBe('idempotency_key_reused');
    }
    expect((await snapshot(env))[table]).toBe((before[table] ?? 0) + 1);
  });

  it('expires a key after 24 h: the request runs again and the purge removes old keys', async () => {
    const env = await newEnvironment();
    const f = await makeFixture(env);
    const body = op.creates!.validBody(f);
    const key = randomUUID();
    const first = await env.http.post(op.path(f), body, { 'Idempotency-Key': key });
    expect(first.status, first.text).toBe(success);
    await expire(env, key, 'expiresAt');
    const before = await snapshot(env);
    const again = await env.http.post(op.path(f), body, { 'Idempotency-Key': key });
    // Run anew, never a replay.
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    if (op.creates!.sameWhenRerun) {
      // An idempotent add answers the same again and adds nothing.
      expect(again.status).toBe(success);
      expect((await snapshot(env))[table]).toBe(before[table]);
    } else if (op.creates!.rerunRefused) {
      // The record is unique: the run anew is refused and stores nothing.
      expect(again.status, again.text).toBe(op.creates!.rerunRefused.status);
      expect(again.body.code).toBe(op.creates!.rerunRefused.code);
      expect((await snapshot(env))[table]).toBe(before[table]);
    } else {
      expect(again.status, again.text).toBe(success);
      expect(again.text).not.toBe(first.text);
      expect((await snapshot(env))[table]).toBe((before[table] ?? 0) + 1);
    }
    await expire(env, key, 'expiresAt');
    expect(await purgeExpiredIdempotencyKeys(env.deps)).toBeGreaterThanOrEqual(1);
    const rows = await env.deps.db
      .select()
      .from(idempotencyKeys)
      .where(eq(idempotencyKeys.environmentId, env.environmentId));
    expect(rows).toEqual([]);
  });
});

describe('Idempotency-Key rules', () => {
  it('frees the key when the answer is a 5xx, so a retry with it runs the request', async () => {
    const env = await newEnvironment();
    // A facade whose database refuses every write (as when it has just gone away) answers 503.
    const db = faulty(env.deps.db, 'refused');
    // Keys counted in memory: the fault is the procedure's, not the shared rate-limit upsert's.
    const own = await startOwnApp({ ...env.deps, db }, { rateLimitStore: 'memory' });
    try {
      const key = randomUUID();
      const slow = new HttpClient(own.url, env.http.defaultHeaders);
      const failed = await slow.post('/organizations', { name: 'Timed out' }, { 'Idempotency-Key': key });
      expect(failed.status).toBe(503);
      expect(failed.body).toMatchObject({ code: 'service_unavailable' });
      expect((await snapshot(env)).idempotency_keys).toBe(0);
      const retried = await env.http.post('/organizations', { name: 'Timed out' }, { 'Idempotency-Key': key });
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
    } finally {
      await own.close();
    }
  });

  it('never runs a write twice when it committed but its response was lost', async () => {
    const env = await newEnvironment();
    // The write commits, then the connection dies before the answer (as a crash would).
    const db = faulty(env.deps.db, 'lost');
    // Keys counted in memory: the fault is the procedure's, not the shared rate-limit upsert's.
    const own = await startOwnApp({ ...env.deps, db }, { rateLimitStore: 'memory' });
    try {
      const key = randomUUID();
      const lostAnswer = await new HttpClient(own.url, env.http.defaultHeaders).post(
        '/organizations',
        { name: 'Committed once' },
        { 'Idempotency-Key': key },
      );
      expect(lostAnswer.status).toBe(503);
      expect((await snapshot(env)).organizations).toBe(1);
      // While the first request's hold lasts, a retry is told it is in flight …
      const early = await env.http.post('/organizations', { name: 'Committed once' }, { 'Idempotency-Key': key });
      expect(early.status).toBe(409);
      // … and after it, that the write happened: it is never run a second time.
      await expire(env, key, 'lockedUntil');
      const late = await env.http.post('/organizations', { name: 'Committed once' }, { 'Idempotency-Key': key });
      expect(late.status).toBe(409);
      expect(late.body.code).toBe('idempotency_key_reused');
      expect((await snapshot(env)).organizations).toBe(1);
    } finally {
      await own.close();
    }
  });

  it('scopes keys by environment', async () => {
    const a = await newEnvironment();
    const b = await newEnvironment();
    const key = randomUUID();
    const ra = await a.http.post('/organizations', { name: 'Same' }, { 'Idempotency-Key': key });
    const rb = await b.http.post('/organizations', { name: 'Same' }, { 'Idempotency-Key': key });
    expect(ra.status).toBe(201);
    expect(rb.status).toBe(201);
    expect(rb.body.id).not.toBe(ra.body.id);
    expect(rb.headers.get('idempotent-replayed')).toBeNull();
  });

  it('replays an error response too, and the key stays bound to its body', async () => {
    const env = await newEnvironment();
    const key = randomUUID();
    const first = await env.http.post('/organizations', { name: '' }, { 'Idempotency-Key': key });
    expect(first.status).toBe(422);
    const second = await env.http.post('/organizations', { name: '' }, { 'Idempotency-Key': key });
    expect(second.status).toBe(422);
    expect(second.text).toBe(first.text);
    expect((await snapshot(env)).organizations).toBe(0);
  });

  it.each([
    ['too long', 'k'.repeat(256)],
    ['with spaces', 'a key'],
  ])('refuses a key %s with 422 and stores nothing', async (_label, key) => {
    const env = await newEnvironment();
    const before = await snapshot(env);
    const res = await env.http.post('/organizations', { name: 'Acme' }, { 'Idempotency-Key': key });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'invalid_request_parameters' });
    expect(await snapshot(env)).toEqual(before);
  });

  it('answers 401 before touching the key store when the API key is wrong', async () => {
    const env = await newEnvironment();
    const res = await env.http.post(
      '/organizations',
      { name: 'Acme' },
      { 'Idempotency-Key': randomUUID(), Authorization: 'Bearer sk_test_wrong' },
    );
    expect(res.status).toBe(401);
    expect((await snapshot(env)).idempotency_keys).toBe(0);
  });

  it('ignores the key on other methods', async () => {
    const env = await newEnvironment();
    const f = await makeFixture(env);
    const res = await env.http.put(`/organizations/${f.organizationId}`, { name: 'X' }, { 'Idempotency-Key': 'k1' });
    expect(res.status).toBe(200);
    expect((await snapshot(env)).idempotency_keys).toBe(0);
  });

  it('makes one organization when the official SDK retries a create with its key', async () => {
    const env = await newEnvironment();
    const port = Number(new URL(env.world.url).port);
    const workos = new WorkOS(env.apiKey, { apiHostname: '127.0.0.1', port, https: false, clientId: env.clientId });
    const key = randomUUID();
    const a = await workos.organizations.createOrganization({ name: 'SDK Inc' }, { idempotencyKey: key });
    const b = await workos.organizations.createOrganization({ name: 'SDK Inc' }, { idempotencyKey: key });
    expect(b.id).toBe(a.id);
    expect((await snapshot(env)).organizations).toBe(1);
  });
});
