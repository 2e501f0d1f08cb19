import { organizationDomains } from '@atrium/db';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { clientSetup } from '../helpers/client.ts';
import { gqlError, surfaces, trpcStatus } from '../helpers/client-surfaces.ts';
import { eventNamesSince, storedEvents } from '../helpers/events.ts';
import { newEnvironment, type TestEnvironment, uniqueDomain } from '../helpers/world.ts';

const DOMAINS = '/_widgets/admin-portal/organization-domains';
const FIELDS = 'id organizationId domain state nameServer subdomain verificationPrefix verificationToken createdAt';

/** A domain of the organization through the API-key surface: pending and due for a check. */
async function pending(env: TestEnvironment, organizationId: string) {
  const created = await env.http.post('/organization_domains', {
    organization_id: organizationId,
    domain: uniqueDomain(),
  });
  await env.http.post(`/organization_domains/${created.body.id}/verify`);
  return created.body as { id: string; domain: string; verification_prefix: string; verification_token: string };
}

async function failed(env: TestEnvironment, organizationId: string) {
  const domain = await pending(env, organizationId);
  await env.deps.db
    .update(organizationDomains)
    .set({ state: 'failed', nextCheckAt: null, verificationFailedReason: 'domain_verification_period_expired' })
    .where(eq(organizationDomains.id, domain.id));
  return domain;
}

const stateOf = async (env: TestEnvironment, id: string) =>
  (await env.deps.db.select().from(organizationDomains).where(eq(organizationDomains.id, id)))[0]?.state;

describe('organization domains on the client surfaces', () => {
  it('lists the organization’s domains in the widget’s shape, never another organization’s', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const b = await clientSetup(env);
    const p = await pending(env, a.organizationId);
    const f = await failed(env, a.organizationId);
    const legacy = uniqueDomain();
    await env.http.put(`/organizations/${a.organizationId}`, { domain_data: [{ domain: legacy, state: 'verified' }] });
    await pending(env, b.organizationId);

    const rest = await a.http.get(DOMAINS);
    expect(rest.status).toBe(200);
    expect(rest.body.data).toHaveLength(3);
    expect(rest.body.data.find((d: { id: string }) => d.id === p.id)).toEqual({
      id: p.id,
      domain: p.domain,
      state: 'Pending',
      nameServer: 'Other',
      // The widget's DNS dialog: TXT at <subdomain>.<domain> = verification_token=<token>, what the worker accepts.
      subdomain: p.verification_prefix,
      verificationPrefix: 'verification_token',
      verificationToken: p.verification_token,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    });
    const states = Object.fromEntries(
      rest.body.data.map((d: { domain: string; state: string }) => [d.domain, d.state]),
    );
    expect(states).toEqual({ [p.domain]: 'Pending', [f.domain]: 'Failed', [legacy]: 'LegacyVerified' });

    const { gql, trpc } = surfaces(env, a);
    const first = await gql.request<any>(
      `query($limit: Int) { organizationDomains(limit: $limit, order: Asc) { data { ${FIELDS} } listMetadata { before after } } }`,
      { limit: 2 },
    );
    expect(first.organizationDomains.data.map((d: { id: string }) => d.id)).toEqual([p.id, f.id]);
    expect(first.organizationDomains.data[0]).toMatchObject({ organizationId: a.organizationId, state: 'Pending' });
    expect(first.organizationDomains.listMetadata).toEqual({ before: null, after: f.id });
    const one = await gql.request<any>(`query($id: ID!) { organizationDomain(id: $id) { ${FIELDS} } }`, { id: f.id });
    expect(one.organizationDomain).toMatchObject({ id: f.id, state: 'Failed', nameServer: 'Other' });

    const typed = await trpc.client.domains.list.query({ limit: 2, order: 'Asc', after: f.id });
    expect(typed.data.map((d) => d.domain)).toEqual([legacy]);
    expect(typed.listMetadata).toEqual({ before: typed.data[0]?.id, after: null });
    expect(await trpc.client.domains.get.query({ id: p.id })).toMatchObject({ id: p.id, state: 'Pending' });
  });

  it('reverify restarts only a failed domain, on every surface; a pending one is 409 and unchanged', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const { gql, trpc } = surfaces(env, a);
    const [f1, f2, f3] = [
      await failed(env, a.organizationId),
      await failed(env, a.organizationId),
      await failed(env, a.organizationId),
    ];
    const p = await pending(env, a.organizationId);
    const before = (await storedEvents(env)).length;

    const rest = await a.http.post(`${DOMAINS}/${f1.id}/reverify`);
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ id: f1.id, state: 'Pending' });
    const viaGql = await gql.request<any>('mutation($id: ID!) { reverifyOrganizationDomain(id: $id) { id state } }', {
      id: f2.id,
    });
    expect(viaGql.reverifyOrganizationDomain).toEqual({ id: f2.id, state: 'Pending' });
    expect(await trpc.client.domains.reverify.mutate({ id: f3.id })).toMatchObject({ state: 'Pending' });
    for (const d of [f1, f2, f3]) expect(await stateOf(env, d.id)).toBe('pending');
    expect(await eventNamesSince(env, before)).toEqual(Array(3).fill('organization_domain.updated'));

    const refused = await a.http.post(`${DOMAINS}/${p.id}/reverify`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'domain_not_failed', message: expect.stringContaining('failed') });
    expect(
      (await gqlError(gql.request(`mutation { reverifyOrganizationDomain(id: "${p.id}") { id } }`))).extensions,
    ).toMatchObject({
      code: 'CONFLICT',
      status: 409,
    });
    expect(await trpcStatus(trpc.client.domains.reverify.mutate({ id: p.id }))).toBe(409);
    expect(await eventNamesSince(env, before)).toHaveLength(3);
  });

  it('adds and deletes domains (events recorded); the deleted domain comes back', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const { gql, trpc } = surfaces(env, a);
    const before = (await storedEvents(env)).length;

    const name = uniqueDomain();
    const added = await gql.request<any>(
      `mutation($d: String!) { createOrganizationDomain(domain: $d) { ${FIELDS} } }`,
      {
        d: name.toUpperCase(),
      },
    );
    expect(added.createOrganizationDomain).toMatchObject({
      domain: name,
      state: 'Pending',
      organizationId: a.organizationId,
    });
    const typed = await trpc.client.domains.create.mutate({ domain: uniqueDomain() });
    expect(typed.state).toBe('Pending');
    expect(await eventNamesSince(env, before)).toEqual([
      'organization_domain.created',
      'organization_domain.updated',
      'organization_domain.created',
      'organization_domain.updated',
    ]);

    const rest = await a.http.delete(`${DOMAINS}/${added.createOrganizationDomain.id}`);
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ id: added.createOrganizationDomain.id, domain: name, state: 'Pending' });
    expect(rest.body.organizationId).toBeUndefined();
    expect(await stateOf(env, added.createOrganizationDomain.id)).toBeUndefined();
    expect(await trpc.client.domains.delete.mutate({ id: typed.id })).toMatchObject({ id: typed.id });
    const third = await pending(env, a.organizationId);
    const viaGql = await gql.request<any>('mutation($id: ID!) { deleteOrganizationDomain(id: $id) { id } }', {
      id: third.id,
    });
    expect(viaGql.deleteOrganizationDomain.id).toBe(third.id);
    expect((await a.http.get(DOMAINS)).body.data).toEqual([]);
    const names = await eventNamesSince(env, before);
    expect(names.filter((n) => n === 'organization_domain.deleted')).toHaveLength(3);
  });

  it.each([
    ['an invalid name', 'not a domain'],
    ['a consumer domain', 'gmail.com'],
    ['an empty name', ''],
  ])('refuses %s with 422 / BAD_USER_INPUT and stores nothing', async (_label, domain) => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const { gql, trpc } = surfaces(env, a);
    const before = (await storedEvents(env)).length;
    const error = await gqlError(
      gql.request('mutation($d: String!) { createOrganizationDomain(domain: $d) { id } }', { d: domain }),
    );
    expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', status: 422 });
    expect(await trpcStatus(trpc.client.domains.create.mutate({ domain }))).toBe(422);
    expect((await a.http.get(DOMAINS)).body.data).toEqual([]);
    expect(await eventNamesSince(env, before)).toEqual([]);
  });

  it('answers 403 / FORBIDDEN without widgets:domain-verification:manage, and changes nothing', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env, { scopes: ['widgets:sso:manage', 'widgets:users-table:manage'] });
    const f = await failed(env, a.organizationId);
    const { gql, trpc } = surfaces(env, a);
    for (const res of [
      await a.http.get(DOMAINS),
      await a.http.delete(`${DOMAINS}/${f.id}`),
      await a.http.post(`${DOMAINS}/${f.id}/reverify`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.message).toMatch(/widgets:domain-verification:manage/);
    }
    for (const op of [
      '{ organizationDomains { data { id } } }',
      `mutation { deleteOrganizationDomain(id: "${f.id}") { id } }`,
      'mutation { createOrganizationDomain(domain: "example.org") { id } }',
    ]) {
      expect((await gqlError(gql.request(op))).extensions.code).toBe('FORBIDDEN');
    }
    expect(await trpcStatus(trpc.client.domains.list.query())).toBe(403);
    expect(await trpcStatus(trpc.client.domains.reverify.mutate({ id: f.id }))).toBe(403);
    expect(await stateOf(env, f.id)).toBe('failed');
  });

  it('treats another organization’s domain as absent: 404 / NOT_FOUND, and it stays', async () => {
    const env = await newEnvironment();
    const a = await clientSetup(env);
    const b = await clientSetup(env);
    const theirs = await failed(env, b.organizationId);
    const { gql, trpc } = surfaces(env, a);
    for (const res of [
      await a.http.delete(`${DOMAINS}/${theirs.id}`),
      await a.http.post(`${DOMAINS}/${theirs.id}/reverify`),
      await a.http.delete(`${DOMAINS}/org_domain_nonexistent`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.message).toEqual(expect.any(String));
    }
    const error = await gqlError(gql.request(`{ organizationDomain(id: "${theirs.id}") { id } }`));
    expect(error.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect(await trpcStatus(trpc.client.domains.delete.mutate({ id: theirs.id }))).toBe(404);
    expect(await stateOf(env, theirs.id)).toBe('failed');
  });
});
