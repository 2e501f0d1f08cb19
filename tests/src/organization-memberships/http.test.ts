import { events, organizationMemberships } from '@atrium/db';
import { and, eq, like } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/people.ts';
import { newEnvironment } from '../helpers/world.ts';

describe('organization memberships over HTTP', () => {
  async function setup() {
    const env = await newEnvironment();
    const org = (await env.http.post('/organizations', { name: 'Acme' })).body;
    const user = (await env.http.post('/user_management/users', { email: uniqueEmail() })).body;
    return { env, org, user };
  }

  it('POST 201, GET, deactivate, reactivate, list filters, DELETE 204', async () => {
    const { env, org, user } = await setup();
    const created = await env.http.post('/user_management/organization_memberships', {
      user_id: user.id,
      organization_id: org.id,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'organization_membership',
      user_id: user.id,
      organization_id: org.id,
      organization_name: 'Acme',
      status: 'active',
      directory_managed: false,
      custom_attributes: {},
    });
    const id = created.body.id;
    expect((await env.http.get(`/user_management/organization_memberships/${id}`)).body).toEqual(created.body);

    // curl sends no body here; the SDK sends {}.
    const off = await env.http.request('PUT', `/user_management/organization_memberships/${id}/deactivate`);
    expect(off.status).toBe(200);
    expect(off.body.status).toBe('inactive');

    const inactive = await env.http.get(
      `/user_management/organization_memberships?organization_id=${org.id}&statuses=inactive`,
    );
    expect(inactive.body.data.map((m: { id: string }) => m.id)).toEqual([id]);
    for (const query of ['statuses=active', 'statuses[]=active', 'statuses=active,pending']) {
      const res = await env.http.get(`/user_management/organization_memberships?user_id=${user.id}&${query}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
    }
    const both = await env.http.get(
      `/user_management/organization_memberships?user_id=${user.id}&statuses=active&statuses=inactive`,
    );
    expect(both.body.data).toHaveLength(1);
    const bad = await env.http.get('/user_management/organization_memberships?statuses=sleeping');
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('invalid_request_parameters');

    const on = await env.http.put(`/user_management/organization_memberships/${id}/reactivate`, {});
    expect(on.status).toBe(200);
    expect(on.body.status).toBe('active');

    const del = await env.http.delete(`/user_management/organization_memberships/${id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await env.http.get(`/user_management/organization_memberships/${id}`)).status).toBe(404);
  });

  it('embeds the member as the users API answers it, on every read, and follows a change of the user', async () => {
    const { env, org, user } = await setup();
    const other = (await env.http.post('/user_management/users', { email: uniqueEmail(), first_name: 'Ada' })).body;
    const path = '/user_management/organization_memberships';
    const created = (await env.http.post(path, { user_id: user.id, organization_id: org.id })).body;
    expect(created.user).toEqual(user);
    const second = (await env.http.post(path, { user_id: other.id, organization_id: org.id })).body;
    expect(second.user).toEqual(other);
    expect((await env.http.get(`${path}/${created.id}`)).body.user).toEqual(user);
    const listed = (await env.http.get(`${path}?organization_id=${org.id}&order=asc`)).body.data;
    expect(listed.map((m: { id: string; user: unknown }) => [m.id, m.user])).toEqual([
      [created.id, user],
      [second.id, other],
    ]);
    expect((await env.http.put(`${path}/${second.id}/deactivate`, {})).body.user).toEqual(other);

    const email = uniqueEmail();
    const renamed = await env.http.put(`/user_management/users/${user.id}`, { email, last_name: 'Lovelace' });
    expect(renamed.status).toBe(200);
    const after = (await env.http.get(`${path}/${created.id}`)).body;
    expect(after.user).toEqual(renamed.body);
    expect(after.user).toMatchObject({ id: user.id, email, last_name: 'Lovelace', name: 'Lovelace' });
    const relisted = (await env.http.get(`${path}?user_id=${user.id}`)).body.data;
    expect(relisted.map((m: { user: { email: string } }) => m.user.email)).toEqual([email]);

    // Upstream's organization_membership.* events carry no user: theirs stay as they were.
    const recorded = await env.deps.db
      .select({ data: events.data })
      .from(events)
      .where(and(eq(events.environmentId, env.environmentId), like(events.event, 'organization_membership.%')));
    expect(recorded).toHaveLength(3);
    for (const { data } of recorded) expect(data).not.toHaveProperty('user');

    // The OpenAPI document declares it (from the procedures' output schema).
    const schemas = (await env.http.get('/openapi.json')).body.components.schemas;
    expect(schemas.OrganizationMembership.properties.user).toEqual({ $ref: '#/components/schemas/User' });
    expect(schemas.OrganizationMembership.required).toContain('user');
  });

  it('bad input: missing ids 422, unknown ids 404, a second membership 409 — one row at most', async () => {
    const { env, org, user } = await setup();
    const path = '/user_management/organization_memberships';
    const missing = await env.http.post(path, {});
    expect(missing.status).toBe(422);
    expect(missing.body.errors.map((e: { code: string }) => e.code).sort()).toEqual([
      'organization_id_required',
      'user_id_required',
    ]);
    const unknown = await env.http.post(path, { user_id: 'user_01HE8GSH8FQPASKSY27THRKRBP', organization_id: org.id });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('entity_not_found');
    expect((await env.http.post(path, { user_id: user.id, organization_id: org.id })).status).toBe(201);
    const second = await env.http.post(path, { user_id: user.id, organization_id: org.id });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('organization_membership_already_exists');
    const rows = await env.deps.db
      .select()
      .from(organizationMemberships)
      .where(eq(organizationMemberships.environmentId, env.environmentId));
    expect(rows).toHaveLength(1);
  });

  it('another environment key gets 404 for every membership operation', async () => {
    const { env, org, user } = await setup();
    const m = (
      await env.http.post('/user_management/organization_memberships', { user_id: user.id, organization_id: org.id })
    ).body;
    const stranger = await newEnvironment();
    const base = `/user_management/organization_memberships/${m.id}`;
    expect((await stranger.http.get(base)).status).toBe(404);
    expect((await stranger.http.put(`${base}/deactivate`, {})).status).toBe(404);
    expect((await stranger.http.put(`${base}/reactivate`, {})).status).toBe(404);
    expect((await stranger.http.delete(base)).status).toBe(404);
    expect((await stranger.http.get('/user_management/organization_memberships')).body.data).toEqual([]);
    expect((await env.http.get(base)).body).toEqual(m);
  });
});
