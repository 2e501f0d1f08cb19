import { describe, expect, it } from 'vitest';
import { storedCounts } from './helpers/store.ts';
import { newEnvironment, uniqueDomain } from './helpers/world.ts';

describe('environment isolation', () => {
  it('makes everything of environment A a 404 through a key of environment B, writes included', async () => {
    const a = await newEnvironment();
    const b = await newEnvironment();
    const domain = uniqueDomain();
    const org = (
      await a.http.post('/organizations', {
        name: 'A',
        external_id: 'iso-1',
        domain_data: [{ domain, state: 'pending' }],
      })
    ).body;
    const domainId = org.domains[0].id as string;
    const before = await storedCounts(a);

    const attempts: [string, string, unknown?][] = [
      ['GET', `/organizations/${org.id}`],
      ['GET', '/organizations/external_id/iso-1'],
      ['PUT', `/organizations/${org.id}`, { name: 'stolen' }],
      ['DELETE', `/organizations/${org.id}`],
      ['GET', `/organization_domains/${domainId}`],
      ['POST', `/organization_domains/${domainId}/verify`, {}],
      ['DELETE', `/organization_domains/${domainId}`],
      ['POST', '/organization_domains', { organization_id: org.id, domain: uniqueDomain() }],
    ];
    for (const [method, path, body] of attempts) {
      const res = await b.http.request(method, path, body === undefined ? {} : { body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
    }
    const message = (await b.http.get(`/organizations/${org.id}`)).body.message;
    const missing = (await b.http.get('/organizations/org_01J00000000000000000000000')).body.message;
    expect(message.replace(org.id, 'ID')).toBe(missing.replace('org_01J00000000000000000000000', 'ID'));

    // Lists and filters of B never show A's data.
    expect((await b.http.get('/organizations')).body.data).toEqual([]);
    expect((await b.http.get(`/organizations?domains=${domain}`)).body.data).toEqual([]);
    // B may claim the same domain name for itself: claims are per environment.
    const own = await b.http.post('/organizations', { name: 'B', domain_data: [{ domain, state: 'verified' }] });
    expect(own.status).toBe(201);

    // Nothing of A changed.
    expect(await storedCounts(a)).toEqual(before);
    expect((await a.http.get(`/organizations/${org.id}`)).body).toEqual(org);
    expect((await b.caller.organizations.list({ limit: 10, order: 'desc' })).data.map((o) => o.name)).toEqual(['B']);
  });
});
