import { randomUUID } from 'node:crypto';
import { contractError, createCaller, createInnerContext } from '@atrium/routers';
import { describe, expect, it } from 'vitest';
import { idempotencyKeyRow } from '../helpers/store.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { snapshot } from './catalog.ts';

/** One `/trpc` call (not batched), answered as tRPC answers it. */
async function trpcCall(env: TestEnvironment, procedure: string, input: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${env.world.url}/trpc/${procedure}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${env.apiKey}`, 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(input),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: JSON.parse(text) };
}

describe('Idempotency-Key on /trpc mutations', () => {
  it('stores one record and replays the first result, marked Idempotent-Replayed', async () => {
    const env = await newEnvironment();
    const key = randomUUID();
    const first = await trpcCall(env, 'organizations.create', { name: 'Over tRPC' }, { 'Idempotency-Key': key });
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await trpcCall(env, 'organizations.create', { name: 'Over tRPC' }, { 'Idempotency-Key': key });
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect((await snapshot(env)).organizations).toBe(1);
    // What is stored is the procedure's result as REST answers it: 201 and the organization's JSON.
    const row = await idempotencyKeyRow(env, key);
    expect(row).toMatchObject({ state: 'completed', responseStatus: 201 });
    expect(JSON.parse(row?.responseBody ?? '')).toEqual(first.body.result.data);
  });

  it('answers 409 idempotency_key_reused for the same key with another input, storing nothing', async () => {
    const env = await newEnvironment();
    const key = randomUUID();
    const first = await trpcCall(env, 'organizations.create', { name: 'First' }, { 'Idempotency-Key': key });
    expect(first.status, first.text).toBe(200);
    const before = await snapshot(env);
    const other = await trpcCall(env, 'organizations.create', { name: 'Second' }, { 'Idempotency-Key': key });
    expect(other.status).toBe(409);
    expect(other.body.error.data.contract).toMatchObject({ status: 409, body: { code: 'idempotency_key_reused' } });
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(await snapshot(env)).toEqual(before);
  });

  it('binds the key to the procedure and its input, whatever the transport: REST then /trpc replays', async () => {
    const env = await newEnvironment();
    const key = randomUUID();
    const rest = await env.http.post('/organizations', { name: 'Both ways' }, { 'Idempotency-Key': key });
    expect(rest.status, rest.text).toBe(201);
    const trpc = await trpcCall(env, 'organizations.create', { name: 'Both ways' }, { 'Idempotency-Key': key });
    expect(trpc.status).toBe(200);
    expect(trpc.headers.get('idempotent-replayed')).toBe('true');
    expect(trpc.body.result.data).toEqual(rest.body);
    expect((await snapshot(env)).organizations).toBe(1);
  });

  it('replays a stored error as the same error', async () => {
    const env = await newEnvironment();
    const key = randomUUID();
    const first = await trpcCall(env, 'organizations.create', { name: '' }, { 'Idempotency-Key': key });
    expect(first.status).toBe(422);
    const second = await trpcCall(env, 'organizations.create', { name: '' }, { 'Idempotency-Key': key });
    expect(second.status).toBe(422);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.error.data.contract).toEqual(first.body.error.data.contract);
    expect(await idempotencyKeyRow(env, key)).toMatchObject({ state: 'completed', responseStatus: 422 });
    expect((await snapshot(env)).organizations).toBe(0);
  });

  it('ignores the key on queries', async () => {
    const env = await newEnvironment();
    const res = await fetch(`${env.world.url}/trpc/organizations.list?input=${encodeURIComponent('{}')}`, {
      headers: { Authorization: `Bearer ${env.apiKey}`, 'Idempotency-Key': randomUUID() },
    });
    expect(res.status).toBe(200);
    expect((await snapshot(env)).idempotency_keys).toBe(0);
  });
});

describe('Idempotency-Key through a caller', () => {
  it('runs the first call, replays it to the second and asks the transport for the replay header', async () => {
    const env = await newEnvironment();
    const key = randomUUID();
    const firstCtx = createInnerContext(env.deps, `Bearer ${env.apiKey}`, undefined, key);
    const first = await createCaller(firstCtx).organizations.create({ name: 'Caller' });
    expect(firstCtx.responseHeaders).toEqual({});
    const secondCtx = createInnerContext(env.deps, `Bearer ${env.apiKey}`, undefined, key);
    const second = await createCaller(secondCtx).organizations.create({ name: 'Caller' });
    expect(second).toEqual(first);
    expect(secondCtx.responseHeaders).toEqual({ 'Idempotent-Replayed': 'true' });
    expect((await snapshot(env)).organizations).toBe(1);
    const reused = await createCaller(createInnerContext(env.deps, `Bearer ${env.apiKey}`, undefined, key))
      .organizations.create({ name: 'Another' })
      .catch((error: unknown) => error);
    expect(contractError(reused)).toMatchObject({ status: 409, body: { code: 'idempotency_key_reused' } });
  });

  it('refuses an invalid key with 422, storing nothing', async () => {
    const env = await newEnvironment();
    const caller = createCaller(createInnerContext(env.deps, `Bearer ${env.apiKey}`, undefined, 'a key'));
    const refused = await caller.organizations.create({ name: 'Caller' }).catch((error: unknown) => error);
    expect(contractError(refused)).toMatchObject({ status: 422, body: { code: 'invalid_request_parameters' } });
    expect(await snapshot(env)).toMatchObject({ organizations: 0, idempotency_keys: 0 });
  });
});
