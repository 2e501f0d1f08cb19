import { invitations } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSetup, WIDGET_HEADERS } from '../helpers/client.ts';
import { storedEventData } from '../helpers/events.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { startMailingApp } from '../helpers/smtp.ts';
import { HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

/**
 * The daily limits of invitation e-mails (routers/src/invitations/service.ts): resends of one
 * invitation (default 5 a day) and e-mails of one organization (here 8 a day), each counted by
 * one atomic upsert, so concurrent requests cannot overshoot; over a limit, 429
 * `rate_limit_exceeded` with `Retry-After`, and nothing mailed. Real SMTP on loopback.
 */
const ORG_MAILS_PER_DAY = 8;
let smtp: Awaited<ReturnType<typeof startMailingApp>>['smtp'];
let url: string;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ smtp, url, close } = await startMailingApp({ invitationMailsPerOrganizationPerDay: ORG_MAILS_PER_DAY }));
});

afterAll(() => close());

const mailsTo = (to: string) => smtp.inbox.filter((m) => m.to === to).length;
const api = (env: TestEnvironment) => new HttpClient(url, { Authorization: `Bearer ${env.apiKey}` });

async function storedInvitations(env: TestEnvironment, organizationId: string) {
  return env.deps.db
    .select({ id: invitations.id, email: invitations.email, state: invitations.state })
    .from(invitations)
    .where(and(eq(invitations.environmentId, env.environmentId), eq(invitations.organizationId, organizationId)));
}

/** Each refusal is the contract's 429 with a Retry-After of at most a day. */
function expectRateLimited(res: { status: number; headers: Headers; body: { code: string } }) {
  expect(res.status).toBe(429);
  expect(res.body.code).toBe('rate_limit_exceeded');
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(24 * 60 * 60);
}

describe('invitation e-mails are limited per day', () => {
  it('REST: of 20 concurrent resends, exactly 5 are mailed; the others are 429 with Retry-After', async () => {
    const env = await newEnvironment();
    const http = api(env);
    const org = await http.post('/organizations', { name: 'Resend Corp' });
    const email = uniqueEmail('third-party');
    const sent = await http.post('/user_management/invitations', { email, organization_id: org.body.id });
    expect(sent.status).toBe(201);
    const id: string = sent.body.id;

    const all = await Promise.all(
      Array.from({ length: 20 }, () => http.post(`/user_management/invitations/${id}/resend`, {})),
    );
    expect(all.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = all.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(15);
    for (const res of refused) expectRateLimited(res);
    expect(refused[0]?.body.message).toMatch(/at most 5 resends of an invitation per day/);
    expect(mailsTo(email)).toBe(1 + 5);
    expect(await storedEventData(env, 'invitation.resent')).toHaveLength(5);
    // The invitation itself is untouched by the refusals.
    expect((await http.get(`/user_management/invitations/${id}`)).body.state).toBe('pending');
  });

  it('an unknown or revoked invitation is 404 or 400, not counted', async () => {
    const env = await newEnvironment();
    const http = api(env);
    const org = await http.post('/organizations', { name: 'Settled Corp' });
    const email = uniqueEmail('settled');
    const sent = await http.post('/user_management/invitations', { email, organization_id: org.body.id });
    await http.post(`/user_management/invitations/${sent.body.id}/revoke`, {});
    for (let i = 0; i < 6; i++) {
      expect((await http.post(`/user_management/invitations/${sent.body.id}/resend`, {})).status).toBe(400);
    }
    expect(
      (await http.post('/user_management/invitations/invitation_01HZZZZZZZZZZZZZZZZZZZZZZZ/resend', {})).status,
    ).toBe(404);
    expect(mailsTo(email)).toBe(1);
  });

  it('an organization mails at most its daily limit: the next send is 429 and nothing is stored', async () => {
    const env = await newEnvironment();
    const http = api(env);
    const org = await http.post('/organizations', { name: 'Busy Corp' });
    const emails = Array.from({ length: ORG_MAILS_PER_DAY + 4 }, (_, i) => uniqueEmail(`invitee-${i}`));
    const all = await Promise.all(
      emails.map((email) => http.post('/user_management/invitations', { email, organization_id: org.body.id })),
    );
    expect(all.filter((r) => r.status === 201)).toHaveLength(ORG_MAILS_PER_DAY);
    const refused = all.filter((r) => r.status !== 201);
    for (const res of refused) expectRateLimited(res);
    expect(refused[0]?.body.message).toMatch(/invitation e-mails of an organization per day/);
    const stored = await storedInvitations(env, org.body.id);
    expect(stored).toHaveLength(ORG_MAILS_PER_DAY);
    expect(emails.reduce((n, email) => n + mailsTo(email), 0)).toBe(ORG_MAILS_PER_DAY);
    // A resend is an e-mail of the organization too.
    const resend = await http.post(`/user_management/invitations/${stored[0]?.id}/resend`, {});
    expectRateLimited(resend);
    // Another organization of the environment has its own count.
    const other = await http.post('/organizations', { name: 'Quiet Corp' });
    const fine = await http.post('/user_management/invitations', {
      email: uniqueEmail('elsewhere'),
      organization_id: other.body.id,
    });
    expect(fine.status).toBe(201);
  });

  it('widgets: REST and GraphQL resends share the limit, and revoking and resending counts too', async () => {
    const env = await newEnvironment();
    const setup = await clientSetup(env, { roleSlug: 'admin' });
    const http = new HttpClient(url, { Authorization: `Bearer ${setup.token}`, ...WIDGET_HEADERS });
    const email = uniqueEmail('widget-invitee');
    const invited = await http.post('/client/graphql', {
      query: `mutation ($email: String!) { inviteUser(input: { email: $email }) {
        __typename ... on UserInvited { invitation { id } } } }`,
      variables: { email },
    });
    const id: string = invited.body.data.inviteUser.invitation.id;
    const RESEND = `mutation ($id: ID!) { resendInvitation(input: { userId: $id }) { __typename } }`;

    const all = await Promise.all([
      ...Array.from({ length: 6 }, () => http.post(`/_widgets/UserManagement/invites/${id}/resend`, {})),
      ...Array.from({ length: 6 }, () => http.post('/client/graphql', { query: RESEND, variables: { id } })),
    ]);
    const [rest, graphql] = [all.slice(0, 6), all.slice(6)];
    const graphqlResent = graphql.filter((r) => r.body.data?.resendInvitation?.__typename === 'InvitationResent');
    expect(rest.filter((r) => r.status === 200).length + graphqlResent.length).toBe(5);
    for (const res of rest.filter((r) => r.status !== 200)) expectRateLimited(res);
    for (const res of graphql.filter((r) => !graphqlResent.includes(r))) {
      expect(res.body.errors[0].extensions).toEqual({ code: 'RATE_LIMITED', status: 429 });
    }
    expect(mailsTo(email)).toBe(1 + 5);

    // Revoked, a resend makes a new invitation: still the same invitee, still over the limit.
    const revoked = await http.delete(`/_widgets/UserManagement/invites/${id}`);
    expect(revoked.status, revoked.text).toBeLessThan(300);
    expectRateLimited(await http.post(`/_widgets/UserManagement/invites/${id}/resend`, {}));
    expect((await storedInvitations(env, setup.organizationId)).filter((i) => i.email === email)).toHaveLength(1);
    expect(mailsTo(email)).toBe(1 + 5);
  });
});
