import { describe, expect, it } from 'vitest';
import { storedCounts } from '../helpers/store.ts';
import { newEnvironment } from '../helpers/world.ts';

const domainCases: [string, (orgId: string) => unknown, number, string][] = [
  ['missing domain', (org) => ({ organization_id: org }), 422, 'invalid_request_parameters'],
  ['missing organization_id', () => ({ domain: 'acme-y.com' }), 422, 'invalid_request_parameters'],
  [
    'domain of the wrong type',
    (org) => ({ organization_id: org, domain: ['a.com'] }),
    422,
    'invalid_request_parameters',
  ],
  ['consumer domain', (org) => ({ organization_id: org, domain: 'yahoo.com' }), 422, 'consumer_domain'],
  ['bare suffix', (org) => ({ organization_id: org, domain: 'com.au' }), 422, 'invalid_domain'],
  ['malformed domain', (org) => ({ organization_id: org, domain: 'acme..com' }), 422, 'invalid_domain'],
  [
    'unknown organization',
    () => ({ organization_id: 'org_01J0000000000000000000000', domain: 'acme-z.com' }),
    404,
    'entity_not_found',
  ],
];

describe('the reserved documentation domains (RFC 2606)', () => {
  it('are not consumer domains: example.com, .net and .org can be added', async () => {
    const env = await newEnvironment();
    const org = (await env.http.post('/organizations', { name: 'Acme' })).body.id as string;
    for (const domain of ['example.com', 'example.net', 'example.org']) {
      const res = await env.http.post('/organization_domains', { organization_id: org, domain });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ organization_id: org, domain, state: 'pending' });
    }
  });
});

describe('bad input to POST /organization_domains', () => {
  it.each(domainCases)('%s → %i %s, nothing stored', async (_name, body, status, code) => {
    const env = await newEnvironment();
    const org = (await env.http.post('/organizations', { name: 'Acme' })).body.id as string;
    const before = await storedCounts(env);
    const res = await env.http.post('/organization_domains', body(org));
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
    expect(await storedCounts(env)).toEqual(before);
  });
});
