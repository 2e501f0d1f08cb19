import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { newEnvironment, uniqueDomain } from '../helpers/world.ts';
import { snapshot } from './catalog.ts';

const deep = (depth: number, open: string, close: string, inner = '1') =>
  open.repeat(depth) + inner + close.repeat(depth);

describe('hostile bodies', () => {
  it.each([
    ['nested arrays 100,000 deep as a field', `{"name":${deep(100_000, '[', ']')}}`],
    ['nested objects 50,000 deep in metadata', `{"name":"Deep","metadata":${deep(50_000, '{"a":', '}', '"x"')}}`],
    ['nested arrays 200,000 deep as the body', deep(200_000, '[', ']')],
  ])('refuses %s with a 4xx contract error, also with an Idempotency-Key, storing nothing', async (_label, raw) => {
    const env = await newEnvironment();
    const before = await snapshot(env);
    for (const headers of [{}, { 'Idempotency-Key': randomUUID() }] as Record<string, string>[]) {
      const res = await env.http.request('POST', '/organizations', {
        raw,
        headers: { 'Content-Type': 'application/json', ...headers },
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body).toEqual(expect.objectContaining({ code: expect.any(String), message: expect.any(String) }));
    }
    const after = await snapshot(env);
    delete before.idempotency_keys;
    delete after.idempotency_keys;
    expect(after).toEqual(before);
  });

  it('refuses a body over 1 MiB with 413 and keeps serving', async () => {
    const env = await newEnvironment();
    const raw = JSON.stringify({ name: 'Big', pad: 'x'.repeat(1024 * 1024) });
    const res = await env.http.request('POST', '/organizations', {
      raw,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
    expect((await env.http.get('/organizations')).status).toBe(200);
    expect((await snapshot(env)).organizations).toBe(0);
  });

  it('refuses a chunked body (no Content-Length) once it passes 1 MiB, with 413, and keeps serving', async () => {
    const env = await newEnvironment();
    const before = await snapshot(env);
    const req = httpRequest(`${env.world.url}/organizations`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${env.apiKey}`, 'Content-Type': 'application/json' },
    });
    req.on('error', () => {}); // the server may close before all of it is sent
    const answered = once(req, 'response');
    req.write(`{"name":"Chunked","pad":"`);
    const piece = 'x'.repeat(64 * 1024);
    for (let sent = 0; sent <= 1024 * 1024; sent += piece.length) req.write(piece);
    req.end('"}');
    const [res] = (await answered) as [import('node:http').IncomingMessage];
    let text = '';
    for await (const chunk of res) text += chunk;
    expect(res.statusCode).toBe(413);
    expect(JSON.parse(text).code).toBe('payload_too_large');
    expect((await env.http.get('/organizations')).status).toBe(200);
    expect(await snapshot(env)).toEqual(before);
  });

  it('stores nothing when the client leaves in the middle of its body, and keeps serving', async () => {
    const env = await newEnvironment();
    const before = await snapshot(env);
    const req = httpRequest(`${env.world.url}/organizations`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${env.apiKey}`,
        'Content-Type': 'application/json',
        'Content-Length': '1000',
      },
    });
    req.on('error', () => {});
    // Headers and part of the body reach the server's socket before the connection goes.
    await new Promise((resolve) => req.write('{"name":"Half', resolve));
    req.destroy();
    // The server is still there, and answers the same path.
    const after = await env.http.post('/organizations', { name: 'Whole' });
    expect(after.status).toBe(201);
    const snap = await snapshot(env);
    expect(snap.organizations).toBe((before.organizations ?? 0) + 1);
    expect((await env.http.get('/organizations')).body.data.map((o: { name: string }) => o.name)).toEqual(['Whole']);
  });

  it('accepts a body just under 1 MiB (unknown fields are ignored)', async () => {
    const env = await newEnvironment();
    const raw = JSON.stringify({ name: 'Padded', pad: 'x'.repeat(1024 * 1024 - 100) });
    const res = await env.http.request('POST', '/organizations', {
      raw,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('Padded');
  });

  it('refuses NUL characters with 422 and stores nothing', async () => {
    const env = await newEnvironment();
    const before = await snapshot(env);
    const res = await env.http.post('/organizations', { name: 'a\u0000b' });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('invalid_request_parameters');
    const list = await env.http.get(`/organizations?domains=${encodeURIComponent('a\u0000b.com')}`);
    expect(list.status).toBe(422);
    expect(await snapshot(env)).toEqual(before);
  });
});

describe('unicode', () => {
  it.each([
    ['emoji and ZWJ sequences', 'Acme 🏳️‍🌈 👩‍👩‍👧'],
    ['right-to-left override', 'Acme \u202eevil'],
    ['combining marks', 'Z\u0351\u0336a\u0336l\u0336g\u0336o'],
    ['astral plane letters', '𝕒𝕔𝕞𝕖'],
    ['CJK', '株式会社アトリウム'],
  ])('stores a name with %s exactly', async (_label, name) => {
    const env = await newEnvironment();
    const res = await env.http.post('/organizations', { name });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe(name.trim());
    expect((await env.http.get(`/organizations/${res.body.id}`)).body.name).toBe(name.trim());
  });

  it.each([
    ['Cyrillic a in apple', 'аpple-%s.com', 'xn--pple-%s'],
    ['Greek omicron in google', 'gοogle-%s.com', 'xn--gogle-%s'],
    ['full-width letters', 'ａｃｍｅ-%s.com', 'acme-%s.com'],
  ])('normalises an IDN homograph (%s) to punycode', async (_label, pattern, expected) => {
    const env = await newEnvironment();
    const tag = Date.now().toString(36);
    const org = await env.http.post('/organizations', { name: 'IDN' });
    const res = await env.http.post('/organization_domains', {
      organization_id: org.body.id,
      domain: pattern.replace('%s', tag),
    });
    expect(res.status).toBe(201);
    expect(res.body.domain).toMatch(/^[\x20-\x7e]+$/);
    expect(res.body.domain.startsWith(expected.split('%s')[0]!)).toBe(true);
  });
});

describe('prototype pollution', () => {
  it.each([
    [
      'string values',
      '{"name":"Proto","metadata":{"__proto__":"x","constructor":"y","prototype":"z"}}',
      { constructor: 'y', prototype: 'z' },
    ],
    ['an object under __proto__', '{"name":"Proto","metadata":{"__proto__":{"polluted":"yes"}}}', {}],
    [
      '__proto__ at the top',
      '{"name":"Proto","__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}',
      {},
    ],
  ])('metadata with %s never pollutes prototypes and stores only plain string data', async (_label, raw, metadata) => {
    const env = await newEnvironment();
    const res = await env.http.request('POST', '/organizations', {
      raw,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.metadata).toEqual(metadata);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    // What is stored is what was answered: `__proto__` is dropped, never set as a prototype.
    const read = await env.http.get(`/organizations/${res.body.id}`);
    expect(read.body.metadata).toEqual(metadata);
  });
});

describe('SQL metacharacters', () => {
  const nasty = ["O'Brien; drop table organizations; --", '%', '_', '\\', "' or '1'='1", '$1'];

  it.each(nasty)('stores and finds %j verbatim as a name and external_id', async (value) => {
    const env = await newEnvironment();
    await env.http.post('/organizations', { name: 'Bystander', external_id: 'bystander' });
    const res = await env.http.post('/organizations', { name: value, external_id: value });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe(value.trim());
    expect(res.body.external_id).toBe(value);
    const found = await env.caller.organizations.getByExternalId({ external_id: value });
    expect(found.id).toBe(res.body.id);
    // A wildcard matches nothing else.
    const list = await env.http.get(`/organizations?domains=${encodeURIComponent(value)}`);
    expect(list.status, list.text).toBe(200);
    expect(list.body).toEqual({ object: 'list', data: [], list_metadata: { before: null, after: null } });
  });

  // The pipeline's path step decodes path parameters after routing
  // (rest-facade/src/pipeline/path-params.ts), so an external_id with reserved characters is readable by path.
  it.each([
    ['a space and a percent sign', 'a b%c'],
    ['UTF-8', 'Zürich-東京-🏳️‍🌈'],
    ['a plus and percent escapes', 'a+b%2Fc%25'],
    ['an encoded slash', 'tenant/42'],
    ['SQL metacharacters', "O'Brien; --"],
  ])('finds an external_id with %s by path', async (_label, externalId) => {
    const env = await newEnvironment();
    await env.http.post('/organizations', { name: 'Bystander', external_id: 'bystander' });
    const res = await env.http.post('/organizations', { name: 'Encoded', external_id: externalId });
    expect(res.status).toBe(201);
    const found = await env.http.get(`/organizations/external_id/${encodeURIComponent(externalId)}`);
    expect(found.status, found.text).toBe(200);
    expect(found.body.id).toBe(res.body.id);
    expect(found.body.external_id).toBe(externalId);
  });

  it('decodes a `+` in a path as a plus, never as a space', async () => {
    const env = await newEnvironment();
    const plus = await env.http.post('/organizations', { name: 'Plus', external_id: 'a+b' });
    await env.http.post('/organizations', { name: 'Space', external_id: 'a b' });
    const found = await env.http.get('/organizations/external_id/a+b');
    expect(found.status).toBe(200);
    expect(found.body.id).toBe(plus.body.id);
  });

  it('decodes other path parameters too (ids), and leaves a malformed escape as sent', async () => {
    const env = await newEnvironment();
    const org = await env.http.post('/organizations', { name: 'Ids' });
    const encoded = [...org.body.id].map((c: string) => `%${c.charCodeAt(0).toString(16)}`).join('');
    const found = await env.http.get(`/organizations/${encoded}`);
    expect(found.status).toBe(200);
    expect(found.body.id).toBe(org.body.id);
    for (const bad of ['%zz', '%E0%A4%A', '%C0%AF', '%FF%FE']) {
      const res = await env.http.get(`/organizations/external_id/${bad}`);
      expect(res.status, bad).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
    }
  });

  it('does not treat % or _ in a domains filter as wildcards', async () => {
    const env = await newEnvironment();
    const domain = uniqueDomain('wild');
    await env.http.post('/organizations', { name: 'W', domain_data: [{ domain, state: 'pending' }] });
    const res = await env.http.get(`/organizations?domains=${encodeURIComponent(domain.replace(/^w/, '_'))}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });
});
