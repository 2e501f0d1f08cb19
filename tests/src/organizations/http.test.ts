import { describe, expect, it } from 'vitest';
import { storedCounts } from '../helpers/store.ts';
import { getWorld, HttpClient, newEnvironment, uniqueDomain } from '../helpers/world.ts';

describe('REST wire: organizations and domains', () => {
  it('serves every operation at its path and verb with the contract statuses', async () => {
    const { http } = await newEnvironment();
    const domain = uniqueDomain();
    const created = await http.post('/organizations', {
      name: 'Acme',
      external_id: 'wire-1',
      domain_data: [{ domain, state: 'pending' }],
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toMatch(/^application\/json/);
    const id = created.body.id as string;

    expect((await http.get(`/organizations/${id}`)).body).toEqual(created.body);
    expect((await http.get('/organizations/external_id/wire-1')).body.id).toBe(id);
    const updated = await http.put(`/organizations/${id}`, { name: 'Acme 2' });
    expect(updated.status).toBe(200);
    expect(updated.body.name).toBe('Acme 2');

    const list = await http.get('/organizations');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', list_metadata: { before: null, after: null } });
    expect(list.body.data.map((o: { id: string }) => o.id)).toEqual([id]);

    const second = uniqueDomain();
    const domainRes = await http.post('/organization_domains', { organization_id: id, domain: second });
    expect(domainRes.status).toBe(201);
    expect(domainRes.body).toMatchObject({ object: 'organization_domain', domain: second, state: 'pending' });
    expect((await http.get(`/organization_domains/${domainRes.body.id}`)).status).toBe(200);

    // POST verify with no body and no content type (as curl sends it) is accepted.
    const verify = await http.request('POST', `/organization_domains/${domainRes.body.id}/verify`);
    expect(verify.status).toBe(201);
    expect(verify.body.state).toBe('pending');

    const del = await http.delete(`/organization_domains/${domainRes.body.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await http.get(`/organization_domains/${domainRes.body.id}`)).status).toBe(404);

    const delOrg = await http.delete(`/organizations/${id}`);
    expect(delOrg.status).toBe(204);
    expect(delOrg.text).toBe('');
    expect((await http.get(`/organizations/${id}`)).body).toEqual({
      code: 'entity_not_found',
      message: `Organization not found: '${id}'.`,
    });
  });

  it('filters by domains in all three encodings, case-insensitively', async () => {
    const { http } = await newEnvironment();
    const [d1, d2, d3] = [uniqueDomain(), uniqueDomain(), uniqueDomain()];
    const a = (await http.post('/organizations', { name: 'A', domain_data: [{ domain: d1, state: 'pending' }] })).body;
    const b = (await http.post('/organizations', { name: 'B', domain_data: [{ domain: d2, state: 'verified' }] })).body;
    await http.post('/organizations', { name: 'C', domain_data: [{ domain: d3, state: 'pending' }] });
    const expected = [b.id, a.id];
    for (const query of [
      `domains=${d1}&domains=${d2.toUpperCase()}`,
      `domains[]=${d1}&domains[]=${d2}`,
      `domains=${d1},${d2}`,
      `domains=${encodeURIComponent(`${d1}, ${d2}`)}`,
    ]) {
      const res = await http.get(`/organizations?${query}`);
      expect(res.status, query).toBe(200);
      expect(
        res.body.data.map((o: { id: string }) => o.id),
        query,
      ).toEqual(expected);
    }
    const single = await http.get(`/organizations?domains=${d3}`);
    expect(single.body.data).toHaveLength(1);
    expect((await http.get('/organizations?domains=nobody.example.org')).body.data).toEqual([]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['order=sideways', 'order'],
  ])('answers 422 for the query %s', async (query, field) => {
    const { http } = await newEnvironment();
    const res = await http.get(`/organizations?${query}`);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('invalid_request_parameters');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('answers a create with the body a later GET returns, byte for byte (metadata keys in stored order)', async () => {
    const { http } = await newEnvironment();
    const created = await http.post('/organizations', {
      name: 'Ordered',
      metadata: { zeta: '1', a: '2', bb: '3', é: '4', e: '5' },
    });
    expect(created.status).toBe(201);
    const read = await http.get(`/organizations/${created.body.id}`);
    expect(read.text).toBe(created.text);
    expect(Object.keys(created.body.metadata)).toEqual(['a', 'e', 'bb', 'é', 'zeta']);
  });

  it('accepts order=normal, asc and desc', async () => {
    const { http } = await newEnvironment();
    const a = (await http.post('/organizations', { name: 'A' })).body.id;
    const b = (await http.post('/organizations', { name: 'B' })).body.id;
    expect((await http.get('/organizations?order=asc')).body.data.map((o: { id: string }) => o.id)).toEqual([a, b]);
    expect((await http.get('/organizations?order=desc')).body.data.map((o: { id: string }) => o.id)).toEqual([b, a]);
    expect((await http.get('/organizations?order=normal')).body.data.map((o: { id: string }) => o.id)).toEqual([b, a]);
  });

  it('refuses a request without a valid API key with 401', async () => {
    const world = await getWorld();
    for (const headers of [
      {} as Record<string, string>,
      { Authorization: 'Bearer sk_test_nope' },
      { Authorization: `Bearer sk_test_${'a'.repeat(40)}` },
      { Authorization: 'Basic Zm9vOmJhcg==' },
    ]) {
      const res = await new HttpClient(world.url, headers).get('/organizations');
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
    }
  });

  it('echoes X-Request-ID, or makes one', async () => {
    const { http } = await newEnvironment();
    const echoed = await http.get('/organizations', { 'X-Request-ID': 'req-abc-123' });
    expect(echoed.headers.get('x-request-id')).toBe('req-abc-123');
    const made = await http.get('/organizations/org_missing');
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const health = await http.get('/healthz');
    expect(health.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('renders malformed JSON, wrong content types, oversized bodies, unknown routes and verbs as JSON errors', async () => {
    const env = await newEnvironment();
    const { http } = env;
    const malformed = await http.request('POST', '/organizations', {
      raw: '{"name": ',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ code: 'invalid_json', message: 'The request body is not valid JSON.' });

    const form = await http.request('POST', '/organizations', {
      raw: 'name=Acme',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(form.body.code).toBe('unsupported_media_type');

    const charset = await http.request('POST', '/organizations', {
      raw: JSON.stringify({ name: 'Charset' }),
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    expect(charset.status).toBe(201);

    const array = await http.request('POST', '/organizations', {
      raw: '[1,2]',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(array.status).toBe(422);

    const huge = await http.post('/organizations', { name: 'Big', metadata: { k: 'x'.repeat(1_100_000) } });
    expect(huge.status).toBe(413);
    expect(huge.body.code).toBe('payload_too_large');
    // The server keeps serving.
    expect((await http.get('/organizations')).status).toBe(200);

    const unknown = await http.get('/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('route_not_found');
    const verb = await http.patch('/organizations', {});
    expect(verb.status).toBe(405);
    expect(verb.headers.get('allow')).toContain('GET');
    expect(await storedCounts(env)).toMatchObject({ organizations: 1 });
  });

  it('serves the OpenAPI document, the reference page, health and readiness', async () => {
    const world = await getWorld();
    const http = new HttpClient(world.url);
    const doc = await http.get('/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\.1/);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        '/organizations',
        '/organizations/{id}',
        '/organizations/external_id/{external_id}',
        '/organization_domains',
        '/organization_domains/{id}',
        '/organization_domains/{id}/verify',
      ]),
    );
    expect(doc.body.paths['/organizations'].post.responses['201']).toBeDefined();
    expect(doc.body.paths['/organizations/{id}'].delete.responses['204']).toBeDefined();
    const docs = await http.get('/docs');
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
    expect((await http.get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await http.get('/readyz')).body).toMatchObject({ status: 'ready' });
  });

  it('reaches the same procedures over tRPC at /trpc with the same API key', async () => {
    const env = await newEnvironment();
    const created = await env.http.post('/trpc/organizations.create', { name: 'Via tRPC' });
    expect(created.status).toBe(200);
    expect(created.body.result.data.name).toBe('Via tRPC');
    const missing = await env.http.get(`/trpc/organizations.get?input=${encodeURIComponent('{"id":"org_nope"}')}`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.data.contract.body.code).toBe('entity_not_found');
    const world = await getWorld();
    const anonymous = await new HttpClient(world.url).get('/trpc/organizations.list?input=%7B%7D');
    expect(anonymous.status).toBe(401);
  });
});

const tooManyKeys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));

/** Each row: a body for POST /organizations, the status and code it must get, nothing stored. */
const createOrganizationCases: [string, unknown, number, string, string?][] = [
  ['missing name', {}, 422, 'invalid_request_parameters', 'name_required'],
  ['empty name', { name: '' }, 422, 'invalid_request_parameters', 'name_invalid'],
  ['blank name', { name: '   ' }, 422, 'invalid_request_parameters', 'name_invalid'],
  ['name too long', { name: 'x'.repeat(257) }, 422, 'invalid_request_parameters', 'name_invalid'],
  ['name of the wrong type', { name: 42 }, 422, 'invalid_request_parameters', 'name_invalid'],
  ['metadata not an object', { name: 'A', metadata: 'x' }, 422, 'invalid_request_parameters', 'metadata_invalid'],
  [
    'metadata with a number',
    { name: 'A', metadata: { a: 1 } },
    422,
    'invalid_request_parameters',
    'metadata.a_invalid',
  ],
  [
    'metadata with 51 keys',
    { name: 'A', metadata: tooManyKeys },
    422,
    'invalid_request_parameters',
    'metadata_invalid',
  ],
  ['metadata key over 40', { name: 'A', metadata: { ['k'.repeat(41)]: 'v' } }, 422, 'invalid_request_parameters'],
  ['metadata value over 600', { name: 'A', metadata: { k: 'v'.repeat(601) } }, 422, 'invalid_request_parameters'],
  ['external_id over 128', { name: 'A', external_id: 'e'.repeat(129) }, 422, 'invalid_request_parameters'],
  ['domain_data not an array', { name: 'A', domain_data: 'acme.com' }, 422, 'invalid_request_parameters'],
  [
    'domain_data bad state',
    { name: 'A', domain_data: [{ domain: 'acme-x.com', state: 'owned' }] },
    422,
    'invalid_request_parameters',
  ],
  ['consumer domain', { name: 'A', domain_data: [{ domain: 'gmail.com', state: 'pending' }] }, 422, 'consumer_domain'],
  [
    'consumer domain, other case',
    { name: 'A', domain_data: [{ domain: 'Outlook.COM', state: 'verified' }] },
    422,
    'consumer_domain',
  ],
  [
    'bare public suffix',
    { name: 'A', domain_data: [{ domain: 'co.uk', state: 'pending' }] },
    422,
    'invalid_request_parameters',
    'invalid_domain',
  ],
  [
    'URL as domain',
    { name: 'A', domain_data: [{ domain: 'https://acme.com/', state: 'pending' }] },
    422,
    'invalid_request_parameters',
    'invalid_domain',
  ],
  [
    'IP as domain',
    { name: 'A', domain_data: [{ domain: '10.0.0.1', state: 'pending' }] },
    422,
    'invalid_request_parameters',
    'invalid_domain',
  ],
  [
    'localhost',
    { name: 'A', domain_data: [{ domain: 'localhost', state: 'pending' }] },
    422,
    'invalid_request_parameters',
    'invalid_domain',
  ],
  [
    'bad hyphen',
    { name: 'A', domain_data: [{ domain: '-acme.com', state: 'pending' }] },
    422,
    'invalid_request_parameters',
    'invalid_domain',
  ],
  [
    'unknown suffix',
    { name: 'A', domain_data: [{ domain: 'acme.invalidtld', state: 'pending' }] },
    422,
    'invalid_request_parameters',
    'invalid_domain',
  ],
];

describe('bad input to POST /organizations', () => {
  it.each(createOrganizationCases)('%s → %i %s, nothing stored', async (_name, body, status, code, fieldCode) => {
    const env = await newEnvironment();
    const res = await env.http.post('/organizations', body);
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
    expect(typeof res.body.message).toBe('string');
    if (fieldCode) expect(res.body.errors.map((e: { code: string }) => e.code)).toContain(fieldCode);
    expect(await storedCounts(env)).toEqual({ organizations: 0, domains: 0, events: 0 });
  });
});

describe('bad input to PUT /organizations/:id', () => {
  it.each([
    ['name of the wrong type', { name: false }, 422, 'invalid_request_parameters'],
    ['allow_profiles not a boolean', { allow_profiles_outside_organization: 'yes' }, 422, 'invalid_request_parameters'],
    ['consumer domain', { domain_data: [{ domain: 'hotmail.com', state: 'pending' }] }, 422, 'consumer_domain'],
    [
      'one good and one bad domain',
      {
        domain_data: [
          { domain: 'good-domain-q.com', state: 'pending' },
          { domain: 'co.uk', state: 'pending' },
        ],
      },
      422,
      'invalid_request_parameters',
    ],
  ])('%s → %i %s, nothing changed', async (_name, body, status, code) => {
    const env = await newEnvironment();
    const org = (
      await env.http.post('/organizations', {
        name: 'Acme',
        domain_data: [{ domain: uniqueDomain(), state: 'pending' }],
      })
    ).body;
    const res = await env.http.put(`/organizations/${org.id}`, body);
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
    expect((await env.http.get(`/organizations/${org.id}`)).body).toEqual(org);
  });

  it('answers 404 for unknown ids on every id route', async () => {
    const { http } = await newEnvironment();
    for (const [method, path] of [
      ['GET', '/organizations/org_01J00000000000000000000000'],
      ['PUT', '/organizations/org_01J00000000000000000000000'],
      ['DELETE', '/organizations/org_01J00000000000000000000000'],
      ['GET', '/organizations/external_id/nope'],
      ['GET', '/organization_domains/org_domain_01J00000000000000000000000'],
      ['POST', '/organization_domains/org_domain_01J00000000000000000000000/verify'],
      ['DELETE', '/organization_domains/org_domain_01J00000000000000000000000'],
      ['GET', "/organizations/'; drop table organizations; --"],
    ] as const) {
      const res = await http.request(method, encodeURI(path), method === 'PUT' ? { body: { name: 'x' } } : {});
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
    }
  });
});

describe('organization reads over HTTP', () => {
  it('answers an unknown id with the contract 404 and a list with the envelope', async () => {
    const env = await newEnvironment();
    const missing = await env.http.get('/organizations/org_01HE8GSH8FQPASKSY27THRKRBP');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('entity_not_found');
    const created = await env.http.post('/organizations', { name: 'Wire' });
    const list = await env.http.get(`/organizations?limit=1&order=asc&after=${created.body.id}`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ object: 'list', data: [], list_metadata: { before: null, after: null } });
  });
});
