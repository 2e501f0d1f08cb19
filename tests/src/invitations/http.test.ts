import { describe, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/people.ts';
import { newEnvironment } from '../helpers/world.ts';
import { snapshot } from '../reliability/catalog.ts';

const base = '/user_management/invitations';

describe('invitations (HTTP)', () => {
  it('answers 201 to send, 200 to reads, accept, revoke and resend; accept needs no body', async () => {
    const env = await newEnvironment();
    const org = (await env.http.post('/organizations', { name: 'Acme' })).body.id;
    const sent = await env.http.post(base, { email: uniqueEmail(), organization_id: org, role_slug: 'member' });
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body).toMatchObject({
      object: 'invitation',
      state: 'pending',
      organization_id: org,
      role_slug: 'member',
    });

    expect((await env.http.get(`${base}/${sent.body.id}`)).body).toEqual(sent.body);
    const byToken = await env.http.get(`${base}/by_token/${sent.body.token}`);
    expect(byToken.status).toBe(200);
    expect(byToken.body).toEqual(sent.body);
    const list = await env.http.get(`${base}?organization_id=${org}&limit=5`);
    expect(list.body).toEqual({ object: 'list', data: [sent.body], list_metadata: { before: null, after: null } });

    const resent = await env.http.post(`${base}/${sent.body.id}/resend`, {});
    expect(resent.status).toBe(200);
    // The SDK posts accept and revoke without a body (Content-Type application/json).
    const accepted = await env.http.request('POST', `${base}/${sent.body.id}/accept`, {
      headers: { 'Content-Type': 'application/json' },
    });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.state).toBe('accepted');

    const other = await env.http.post(base, { email: uniqueEmail(), organization_id: org });
    const revoked = await env.http.request('POST', `${base}/${other.body.id}/revoke`, {
      headers: { 'Content-Type': 'application/json' },
    });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.state).toBe('revoked');
  });

  it('answers the contract error for a revoked token, a malformed e-mail, an unknown organization; stores nothing', async () => {
    const env = await newEnvironment();
    const sent = await env.http.post(base, { email: uniqueEmail() });
    await env.http.post(`${base}/${sent.body.id}/revoke`, {});
    const before = await snapshot(env);

    const revoked = await env.http.post(`${base}/${sent.body.id}/accept`, {});
    expect(revoked.status).toBe(400);
    expect(revoked.body).toEqual({
      code: 'invitation_revoked',
      message: 'The invitation was revoked.',
      errors: [{ field: 'state', code: 'invitation_revoked', message: 'The invitation was revoked.' }],
    });

    const malformed = await env.http.post(base, { email: 'ada@' });
    expect(malformed.status).toBe(422);
    expect(malformed.body).toMatchObject({
      code: 'invalid_request_parameters',
      errors: [expect.objectContaining({ field: 'email', code: 'email_invalid' })],
    });
    const days = await env.http.post(base, { email: uniqueEmail(), expires_in_days: '7' });
    expect(days.status).toBe(422);
    expect(days.body.errors[0].field).toBe('expires_in_days');

    const unknown = await env.http.post(base, {
      email: uniqueEmail(),
      organization_id: 'org_01HE8GSH8FQPASKSY27THRKRBP',
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('entity_not_found');

    const token = await env.http.get(`${base}/by_token/not-a-token`);
    expect(token.status).toBe(404);
    expect(token.body).toEqual({ code: 'entity_not_found', message: 'Invitation not found for this token.' });
    expect(await snapshot(env)).toEqual(before);
  });

  it("another environment's invitation is 404 for every operation", async () => {
    const a = await newEnvironment();
    const b = await newEnvironment();
    const sent = (await a.http.post(base, { email: uniqueEmail() })).body;
    for (const res of [
      await b.http.get(`${base}/${sent.id}`),
      await b.http.get(`${base}/by_token/${sent.token}`),
      await b.http.post(`${base}/${sent.id}/accept`, {}),
      await b.http.post(`${base}/${sent.id}/revoke`, {}),
      await b.http.post(`${base}/${sent.id}/resend`, {}),
    ]) {
      expect(res.status, res.text).toBe(404);
      expect(res.body.code).toBe('entity_not_found');
    }
    expect((await b.http.get(base)).body.data).toEqual([]);
    expect((await a.http.get(`${base}/${sent.id}`)).body).toEqual(sent);
  });
});
