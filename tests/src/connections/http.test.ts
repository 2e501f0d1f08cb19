import { connections, events } from '@atrium/db';
import { WorkOS } from '@workos-inc/node';
import { and, eq, like } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { adminCaller, makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

async function seed(env: TestEnvironment) {
  const admin = await adminCaller();
  const acme = await makeOrganization(env, 'Acme');
  const globex = await makeOrganization(env, 'Globex');
  const made = [];
  for (const [organization_id, connection_type, name] of [
    [acme, 'OktaSAML', 'Acme Okta'],
    [acme, 'GoogleOAuth', 'Acme Google'],
    [globex, 'OktaSAML', 'Globex Okta'],
    [globex, 'AzureSAML', 'Globex Entra'],
    [acme, 'OktaSAML', 'Acme Okta 2'],
  ] as const) {
    made.push(
      await admin.connections.create({ environment: env.environmentId, organization_id, connection_type, name }),
    );
  }
  return { admin, acme, globex, made };
}

const connectionEvents = (env: TestEnvironment) =>
  env.deps.db
    .select()
    .from(events)
    .where(and(eq(events.environmentId, env.environmentId), like(events.event, 'connection.%')))
    .orderBy(events.id);

describe('GET /connections', () => {
  it('carries the stored domains, and `options.signing_cert` on SAML connections only', async () => {
    const env = await newEnvironment();
    const { made } = await seed(env);
    const [okta, google] = made;
    if (!okta || !google) throw new Error('seeded connections missing');
    const cert = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    await env.deps.db
      .update(connections)
      .set({
        domains: [{ id: 'conn_domain_01HZZZZZZZZZZZZZZZZZZZZZZZ', domain: 'acme.test' }],
        samlSpCertificate: cert,
      })
      .where(eq(connections.id, okta.id));
    const one = await env.http.get(`/connections/${okta.id}`);
    expect(one.status).toBe(200);
    expect(one.body.domains).toEqual([
      { object: 'connection_domain', id: 'conn_domain_01HZZZZZZZZZZZZZZZZZZZZZZZ', domain: 'acme.test' },
    ]);
    expect(one.body.options).toEqual({ signing_cert: cert });
    const listed = (await env.http.get('/connections')).body.data;
    expect(listed.find((c: { id: string }) => c.id === okta.id).options).toEqual({ signing_cert: cert });
    // Not a SAML connection: upstream has no `options` for it, so it is absent (not null).
    const oauth = await env.http.get(`/connections/${google.id}`);
    expect(Object.hasOwn(oauth.body, 'options')).toBe(false);
    expect(oauth.body.domains).toEqual([]);
  });

  it('lists newest first in an envelope without `object`', async () => {
    const env = await newEnvironment();
    const { made } = await seed(env);
    const res = await env.http.get('/connections');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'list_metadata']);
    expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(made.map((c) => c.id).reverse());
    expect(res.body.list_metadata).toEqual({ before: null, after: null });
    expect(res.body.data[0]).toEqual({
      object: 'connection',
      id: expect.stringMatching(/^conn_[0-9A-Z]{26}$/),
      organization_id: made[4]?.organization_id,
      connection_type: 'OktaSAML',
      name: 'Acme Okta 2',
      state: 'active',
      // Upstream's deprecated `status` is still required by its schema.
      status: 'linked',
      domains: [],
      // Upstream's SAML options: no request-signing certificate until the connection is configured.
      options: { signing_cert: null },
      created_at: expect.stringMatching(/\.\d{3}Z$/),
      updated_at: expect.stringMatching(/\.\d{3}Z$/),
    });
  });

  it('filters by organization_id and connection_type, together or alone', async () => {
    const env = await newEnvironment();
    const { acme, globex } = await seed(env);
    const names = async (query: string) =>
      (await env.http.get(`/connections?${query}`)).body.data.map((c: { name: string }) => c.name);
    expect(await names(`organization_id=${acme}&order=asc`)).toEqual(['Acme Okta', 'Acme Google', 'Acme Okta 2']);
    expect(await names('connection_type=OktaSAML&order=asc')).toEqual(['Acme Okta', 'Globex Okta', 'Acme Okta 2']);
    expect(await names(`organization_id=${globex}&connection_type=OktaSAML`)).toEqual(['Globex Okta']);
    expect(await names('organization_id=org_01HZZZZZZZZZZZZZZZZZZZZZZZ')).toEqual([]);
    const bad = await env.http.get('/connections?connection_type=Nope');
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe('connection_type');
  });

  it('paginates with after and before', async () => {
    const env = await newEnvironment();
    const { made } = await seed(env);
    const ids = made.map((c) => c.id);
    const first = await env.http.get('/connections?limit=2&order=asc');
    expect(first.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 2));
    expect(first.body.list_metadata).toEqual({ before: null, after: ids[1] });
    const second = await env.http.get(`/connections?limit=2&order=asc&after=${ids[1]}`);
    expect(second.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(2, 4));
    expect(second.body.list_metadata).toEqual({ before: ids[2], after: ids[3] });
    const back = await env.http.get(`/connections?limit=2&order=asc&before=${ids[2]}`);
    expect(back.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 2));
    const bad = await env.http.get('/connections?limit=0');
    expect(bad.status).toBe(422);
  });

  it("never shows another environment's connections", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    await seed(other);
    const res = await env.http.get('/connections');
    expect(res.body.data).toEqual([]);
  });

  it('works with the SDK: sso.listConnections and autoPagination', async () => {
    const env = await newEnvironment();
    const { acme } = await seed(env);
    const port = Number(new URL(env.world.url).port);
    const workos = new WorkOS(env.apiKey, { apiHostname: '127.0.0.1', port, https: false, clientId: env.clientId });
    const page = await workos.sso.listConnections({ organizationId: acme, limit: 2 });
    expect(page.data.map((c) => c.name)).toEqual(['Acme Okta 2', 'Acme Google']);
    expect(page.data[0]).toMatchObject({ type: 'OktaSAML', state: 'active', organizationId: acme });
    const all = await workos.sso.listConnections({ organizationId: acme });
    expect((await all.autoPagination()).map((c) => c.name)).toEqual(['Acme Okta 2', 'Acme Google', 'Acme Okta']);
    const okta = await workos.sso.listConnections({ connectionType: 'OktaSAML' as never });
    expect(okta.data).toHaveLength(3);
  });
});

describe('admin connections', () => {
  it('activates, deactivates and deletes, recording one event per change with the API shape', async () => {
    const env = await newEnvironment();
    const admin = await adminCaller();
    const organization_id = await makeOrganization(env);
    const created = await admin.connections.create({
      environment: env.environmentId,
      organization_id,
      connection_type: 'OktaSAML',
      name: 'Okta',
      state: 'inactive',
    });
    expect(created.state).toBe('inactive');
    const active = await admin.connections.activate({ connection_id: created.id });
    expect(active.state).toBe('active');
    expect(await admin.connections.activate({ connection_id: created.id })).toEqual(active); // no change, no event
    const inactive = await admin.connections.deactivate({ connection_id: created.id });
    expect(inactive.state).toBe('inactive');
    await admin.connections.delete({ connection_id: created.id });
    expect(
      await env.deps.db.select().from(connections).where(eq(connections.environmentId, env.environmentId)),
    ).toEqual([]);
    const recorded = await connectionEvents(env);
    expect(recorded.map((e) => [e.event, e.data.state, e.data.status])).toEqual([
      ['connection.created', 'inactive', 'unlinked'],
      ['connection.activated', 'active', 'linked'],
      ['connection.deactivated', 'inactive', 'unlinked'],
      ['connection.deleted', 'inactive', 'unlinked'],
    ]);
    expect(recorded[1]?.data).toEqual(active);
    expect(recorded.every((e) => e.organizationId === organization_id)).toBe(true);
    await expect(admin.connections.activate({ connection_id: created.id })).rejects.toMatchObject({ status: 404 });
  });

  it('refuses a bad type or a foreign organization and stores nothing', async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const admin = await adminCaller();
    const foreign = await makeOrganization(other);
    await expect(
      admin.connections.create({
        environment: env.environmentId,
        organization_id: foreign,
        connection_type: 'OktaSAML',
        name: 'x',
      }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(
      admin.connections.create({
        environment: env.environmentId,
        organization_id: await makeOrganization(env),
        // @ts-expect-error: not one of upstream's connection types
        connection_type: 'FaxSAML',
        name: 'x',
      }),
    ).rejects.toMatchObject({ status: 422 });
    expect(
      await env.deps.db.select().from(connections).where(eq(connections.environmentId, env.environmentId)),
    ).toEqual([]);
    expect(await connectionEvents(env)).toEqual([]);
  });
});
