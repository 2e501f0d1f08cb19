import { connections } from '@atrium/db';
import { NotFoundException } from '@workos-inc/node';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { storedEvents } from '../helpers/events.ts';
import { sdkFor } from '../helpers/sdk.ts';
import { adminCaller, makeOrganization } from '../helpers/tokens.ts';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';

async function makeConnection(env: TestEnvironment, name = 'Acme Okta') {
  const admin = await adminCaller();
  const organization_id = await makeOrganization(env);
  const created = await admin.connections.create({
    environment: env.environmentId,
    organization_id,
    connection_type: 'OktaSAML',
    name,
  });
  // The admin answer adds the SP facts (what the IdP needs); the API's connection is the rest.
  const { saml_acs_url, saml_sp_entity_id, saml_sp_metadata_url, oidc_redirect_uri, ...connection } = created;
  expect([saml_acs_url, saml_sp_entity_id, saml_sp_metadata_url, oidc_redirect_uri].map(Boolean)).toEqual([
    true,
    true,
    true,
    false,
  ]);
  return connection;
}

const storedConnections = (env: TestEnvironment) =>
  env.deps.db.select().from(connections).where(eq(connections.environmentId, env.environmentId));

const connectionEvents = async (env: TestEnvironment) =>
  (await storedEvents(env)).filter((e) => e.event.startsWith('connection.'));

describe('GET and DELETE /connections/:id', () => {
  it('gets a connection with every field of the wire shape', async () => {
    const env = await newEnvironment();
    const made = await makeConnection(env);
    const res = await env.http.get(`/connections/${made.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(made);
    expect(res.body).toMatchObject({ object: 'connection', connection_type: 'OktaSAML', state: 'active', domains: [] });
  });

  it('deletes with 204 and no body, records connection.deleted with the connection as it was, then 404s', async () => {
    const env = await newEnvironment();
    const made = await makeConnection(env);
    const res = await env.http.delete(`/connections/${made.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await storedConnections(env)).toEqual([]);
    const recorded = await connectionEvents(env);
    expect(recorded.map((e) => e.event)).toEqual(['connection.created', 'connection.deleted']);
    expect(recorded[1]?.data).toEqual(made);
    expect(recorded[1]?.organizationId).toBe(made.organization_id);
    const again = await env.http.delete(`/connections/${made.id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('entity_not_found');
    expect((await env.http.get(`/connections/${made.id}`)).status).toBe(404);
    expect(await connectionEvents(env)).toHaveLength(2);
  });

  it("is 404 for another environment's connection, which stays untouched", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const foreign = await makeConnection(other);
    for (const res of [
      await env.http.get(`/connections/${foreign.id}`),
      await env.http.delete(`/connections/${foreign.id}`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'entity_not_found', message: `Connection not found: '${foreign.id}'.` });
    }
    expect(await storedConnections(other)).toHaveLength(1);
    expect((await connectionEvents(other)).map((e) => e.event)).toEqual(['connection.created']);
    expect(await connectionEvents(env)).toEqual([]);
  });
});

describe('official SDK: sso.getConnection and sso.deleteConnection', () => {
  it('gets every required field with the stored values, and deletes', async () => {
    const env = await newEnvironment();
    const workos = sdkFor(env);
    const made = await makeConnection(env, 'Globex Okta');
    const connection = await workos.sso.getConnection(made.id);
    expect(connection).toEqual({
      object: 'connection',
      id: made.id,
      organizationId: made.organization_id,
      name: 'Globex Okta',
      type: 'OktaSAML',
      state: 'active',
      domains: [],
      createdAt: made.created_at,
      updatedAt: made.updated_at,
    });
    await workos.sso.deleteConnection(made.id);
    await expect(workos.sso.getConnection(made.id)).rejects.toBeInstanceOf(NotFoundException);
    await expect(workos.sso.deleteConnection(made.id)).rejects.toBeInstanceOf(NotFoundException);
    expect((await connectionEvents(env)).at(-1)?.event).toBe('connection.deleted');
  });
});
