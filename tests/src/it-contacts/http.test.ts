import { describe, expect, it } from 'vitest';
import { newEnvironment, type TestEnvironment } from '../helpers/world.ts';
import { snapshot } from '../reliability/catalog.ts';

async function organization(env: TestEnvironment, name = 'Acme'): Promise<string> {
  const res = await env.http.post('/organizations', { name });
  expect(res.status).toBe(201);
  return res.body.id;
}

describe('REST wire: IT contacts', () => {
  it('answers the contract statuses: create 201, list 200, invite/revoke/delete 204 with no body', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const created = await env.http.post(`/organizations/${org}/it_contacts`, { email: ' it@acme.com ' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      object: 'it_contact',
      id: expect.stringMatching(/^it_contact_/),
      email: 'it@acme.com',
      admin_portal_invitation: null,
      created_at: expect.stringMatching(/\.\d{3}Z$/),
      updated_at: created.body.created_at,
    });
    const one = `/organizations/${org}/it_contacts/${created.body.id}`;
    for (const [path, body] of [
      [`${one}/invite`, { intents: ['domain_verification', 'sso', 'sso'] }],
      [`${one}/revoke`, {}],
    ] as const) {
      const res = await env.http.post(path, body);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
    }
    const list = await env.http.get(`/organizations/${org}/it_contacts`);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0].admin_portal_invitation).toBeNull();
    const del = await env.http.delete(one);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
  });

  it('keeps intents once each, in upstream order', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const contact = await env.http.post(`/organizations/${org}/it_contacts`, { email: 'it@acme.com' });
    await env.http.post(`/organizations/${org}/it_contacts/${contact.body.id}/invite`, {
      intents: ['bring_your_own_key', 'sso', 'sso'],
    });
    const listed = await env.http.get(`/organizations/${org}/it_contacts`);
    expect(listed.body.data[0].admin_portal_invitation.intents).toEqual(['sso', 'bring_your_own_key']);
  });

  it('lists up to 100 contacts on the first page when no limit is sent (the SDK sends none)', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    for (let i = 0; i < 12; i++) {
      expect((await env.http.post(`/organizations/${org}/it_contacts`, { email: `c${i}@acme.com` })).status).toBe(201);
    }
    expect((await env.http.get(`/organizations/${org}/it_contacts`)).body.data).toHaveLength(12);
    const page = await env.http.get(`/organizations/${org}/it_contacts?limit=5&order=asc`);
    expect(page.body.data).toHaveLength(5);
    expect(page.body.list_metadata.after).toBe(page.body.data[4].id);
    expect((await env.http.get(`/organizations/${org}/it_contacts?limit=101`)).status).toBe(422);
  });

  it("is 404 for another environment's organization or contact, which stay unchanged", async () => {
    const env = await newEnvironment();
    const other = await newEnvironment();
    const foreignOrg = await organization(other);
    const foreign = await other.http.post(`/organizations/${foreignOrg}/it_contacts`, { email: 'it@globex.com' });
    const before = await snapshot(other);
    const one = `/organizations/${foreignOrg}/it_contacts/${foreign.body.id}`;
    for (const res of [
      await env.http.get(`/organizations/${foreignOrg}/it_contacts`),
      await env.http.post(`/organizations/${foreignOrg}/it_contacts`, { email: 'x@globex.com' }),
      await env.http.post(`${one}/invite`, { intents: ['sso'] }),
      await env.http.post(`${one}/revoke`, {}),
      await env.http.delete(one),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
    }
    expect(await snapshot(other)).toEqual(before);
  });

  it.each([
    ['no email', {}, 'email'],
    ['a malformed email', { email: 'it@' }, 'email'],
    ['a number', { email: 5 }, 'email'],
    ['an email too long', { email: `${'a'.repeat(320)}@acme.com` }, 'email'],
  ])('refuses a contact with %s (422), storing nothing', async (_label, body, field) => {
    const env = await newEnvironment();
    const org = await organization(env);
    const before = await snapshot(env);
    const res = await env.http.post(`/organizations/${org}/it_contacts`, body);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('invalid_request_parameters');
    expect(res.body.errors[0].field).toBe(field);
    expect(await snapshot(env)).toEqual(before);
  });

  it('refuses a concurrent second invitation: of 10 invites of different contacts one wins, the rest are 409', async () => {
    const env = await newEnvironment();
    const org = await organization(env);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      ids.push((await env.http.post(`/organizations/${org}/it_contacts`, { email: `c${i}@acme.com` })).body.id);
    }
    const results = await Promise.all(
      ids.map((id) => env.http.post(`/organizations/${org}/it_contacts/${id}/invite`, { intents: ['sso'] })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([204, ...Array(9).fill(409)]);
    const listed = await env.http.get(`/organizations/${org}/it_contacts`);
    expect(
      listed.body.data.filter((c: { admin_portal_invitation: unknown }) => c.admin_portal_invitation),
    ).toHaveLength(1);
  });
});
