import { WorkOS } from '@workos-inc/node';
import { describe, expect, it } from 'vitest';
import { newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

/** Two organizations with a domain each: 4 events (2 × organization_domain.created + organization.created). */
async function seed(env: TestEnvironment) {
  const a = await env.http.post('/organizations', {
    name: 'A',
    domain_data: [{ domain: uniqueDomain(), state: 'pending' }],
  });
  const b = await env.http.post('/organizations', {
    name: 'B',
    domain_data: [{ domain: uniqueDomain(), state: 'pending' }],
  });
  return { a: a.body, b: b.body };
}

describe('GET /events', () => {
  it('lists events in upstream shape, newest first by default', async () => {
    const env = await newEnvironment();
    const { b } = await seed(env);
    const res = await env.http.get('/events');
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    expect(res.body.data.map((e: { event: string }) => e.event)).toEqual([
      'organization.created',
      'organization_domain.created',
      'organization.created',
      'organization_domain.created',
    ]);
    const [first] = res.body.data;
    expect(Object.keys(first).sort()).toEqual(['created_at', 'data', 'event', 'id', 'object']);
    expect(first).toMatchObject({ object: 'event', data: b });
    expect(first.id).toMatch(/^event_[0-9A-Z]{26}$/);
    expect(first.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.body.list_metadata).toEqual({ before: null, after: null });
  });

  it.each([
    ['repeated', 'events=organization.created&events=organization.deleted'],
    ['bracketed', 'events[]=organization.created&events[]=organization.deleted'],
    ['comma-separated', 'events=organization.created,organization.deleted'],
  ])('filters by event names (%s)', async (_label, query) => {
    const env = await newEnvironment();
    await seed(env);
    const res = await env.http.get(`/events?${query}`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: { event: string }) => e.event)).toEqual([
      'organization.created',
      'organization.created',
    ]);
  });

  it('filters by organization_id and by range_start/range_end', async () => {
    const env = await newEnvironment();
    const { a } = await seed(env);
    const byOrg = await env.http.get(`/events?organization_id=${a.id}&order=asc`);
    expect(byOrg.body.data.map((e: { event: string }) => e.event)).toEqual([
      'organization_domain.created',
      'organization.created',
    ]);
    const all = (await env.http.get('/events?order=asc')).body.data as { created_at: string }[];
    const start = all[2]?.created_at as string;
    const later = await env.http.get(`/events?order=asc&range_start=${encodeURIComponent(start)}`);
    expect(later.body.data.length).toBeGreaterThanOrEqual(2);
    expect(later.body.data.every((e: { created_at: string }) => e.created_at >= start)).toBe(true);
    const none = await env.http.get('/events?range_end=2000-01-01T00:00:00.000Z');
    expect(none.body.data).toEqual([]);
  });

  it('pages with after (keyset), and answers 422 for bad parameters', async () => {
    const env = await newEnvironment();
    await seed(env);
    const ids: string[] = [];
    let after: string | null = null;
    do {
      const res: { body: { data: { id: string }[]; list_metadata: { after: string | null } } } = await env.http.get(
        `/events?limit=1&order=asc${after ? `&after=${after}` : ''}`,
      );
      ids.push(...res.body.data.map((e) => e.id));
      after = res.body.list_metadata.after;
    } while (after);
    expect(ids).toHaveLength(4);
    expect([...ids].sort()).toEqual(ids);

    for (const query of ['range_start=yesterday', 'limit=0', 'order=sideways']) {
      const bad = await env.http.get(`/events?${query}`);
      expect(bad.status).toBe(422);
      expect(bad.body.code).toBe('invalid_request_parameters');
    }
  });

  it("never shows another environment's events, and needs an API key", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    await seed(other);
    expect((await env.http.get('/events')).body.data).toEqual([]);
    const anonymous = await env.http.get('/events', { Authorization: '' });
    expect(anonymous.status).toBe(401);
  });

  it('works with the official SDK: events.listEvents with filters', async () => {
    const env = await newEnvironment();
    const { a } = await seed(env);
    const port = Number(new URL(env.world.url).port);
    const workos = new WorkOS(env.apiKey, { apiHostname: '127.0.0.1', port, https: false, clientId: env.clientId });
    const list = await workos.events.listEvents({ events: ['organization.created', 'organization_domain.created'] });
    expect(list.data).toHaveLength(4);
    const created = list.data.find((e) => e.event === 'organization.created');
    expect(created).toMatchObject({ event: 'organization.created' });
    const filtered = await workos.events.listEvents({ events: ['organization.created'], organizationId: a.id });
    expect(filtered.data.map((e) => e.event)).toEqual(['organization.created']);
    const first = filtered.data[0];
    if (first?.event !== 'organization.created') throw new Error('expected organization.created');
    expect(first.data).toMatchObject({ id: a.id, name: 'A' });
    const paged = await workos.events.listEvents({ events: ['organization.created'], limit: 1 });
    expect(paged.data).toHaveLength(1);
    expect(paged.listMetadata.after).toBe(paged.data[0]?.id);
  });
});
