import { describe, expect, it } from 'vitest';
import { storedCounts } from './helpers/store.ts';
import { newEnvironment, uniqueDomain } from './helpers/world.ts';

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
