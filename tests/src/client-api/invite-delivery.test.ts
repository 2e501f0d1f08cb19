import { invitations } from '@atrium/db';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSetup, WIDGET_HEADERS } from '../helpers/client.ts';
import { storedEventData } from '../helpers/events.ts';
import { uniqueEmail } from '../helpers/people.ts';
import { startMailingApp } from '../helpers/smtp.ts';
import { HttpClient, newEnvironment, type TestEnvironment } from '../helpers/world.ts';

/**
 * What the widgets hear of an invitation's e-mail (routers/src/client-api/members/service.ts): a
 * mail server on loopback (smtp-server) that refuses some recipients for good (550) or for now
 * (450), and a server whose deps send through it (nodemailer) with a pending-invitation quota of 2.
 */
let smtp: Awaited<ReturnType<typeof startMailingApp>>['smtp'];
let url: string;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ smtp, url, close } = await startMailingApp({ pendingInvitationsPerOrganization: 2 }));
});

afterAll(() => close());

/** A widget token's calls on this test's server (the one that mails). */
async function member(env: TestEnvironment) {
  const setup = await clientSetup(env);
  const http = new HttpClient(url, { Authorization: `Bearer ${setup.token}`, ...WIDGET_HEADERS });
  const graphql = async (query: string, variables: Record<string, unknown>) =>
    (await http.post('/client/graphql', { query, variables })).body;
  return { ...setup, http, graphql };
}

const INVITE = `mutation ($email: String!) { inviteUser(input: { email: $email }) {
  __typename ... on UserInvited { invitation { id status } } ... on InviteeEmailNotDeliverable { email } } }`;
const RESEND = `mutation ($id: ID!) { resendInvitation(input: { userId: $id }) {
  __typename ... on InvitationResent { invitation { id } } ... on InviteeEmailNotDeliverable { email } } }`;

async function storedInvitations(env: TestEnvironment, email: string) {
  return env.deps.db
    .select({ id: invitations.id, state: invitations.state })
    .from(invitations)
    .where(and(eq(invitations.environmentId, env.environmentId), eq(invitations.email, email)));
}

describe('an invitation e-mail the mail server refuses', () => {
  it('for good: GraphQL answers InviteeEmailNotDeliverable and the invitation is revoked at once', async () => {
    const env = await newEnvironment();
    const m = await member(env);
    const email = uniqueEmail('bounce');
    smtp.refusedForGood.add(email);

    const res = await m.graphql(INVITE, { email });
    expect(res).toEqual({ data: { inviteUser: { __typename: 'InviteeEmailNotDeliverable', email } } });
    const stored = await storedInvitations(env, email);
    expect(stored).toEqual([{ id: expect.any(String), state: 'revoked' }]);
    expect((await storedEventData(env, 'invitation.revoked')).map((e) => e.id)).toEqual([stored[0]?.id]);
    expect(smtp.delivered()).not.toContain(email);
  });

  it('for good, through the widget REST: 400 with its code, and the API-key path keeps its invitation', async () => {
    const env = await newEnvironment();
    const m = await member(env);
    const email = uniqueEmail('bounce');
    smtp.refusedForGood.add(email);

    const res = await m.http.post('/_widgets/UserManagement/invite-user', { email, roles: [] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'invitee_email_not_deliverable',
      message: "The invitee's e-mail address cannot be delivered to.",
    });
    expect((await storedInvitations(env, email)).map((i) => i.state)).toEqual(['revoked']);

    // The API answers the invitation as upstream does (its accept link can go another way); it stands.
    const api = new HttpClient(url, { Authorization: `Bearer ${env.apiKey}` });
    const other = uniqueEmail('bounce');
    smtp.refusedForGood.add(other);
    const sent = await api.post('/user_management/invitations', { email: other, organization_id: m.organizationId });
    expect(sent.status).toBe(201);
    expect(sent.body.state).toBe('pending');
    expect((await storedInvitations(env, other)).map((i) => i.state)).toEqual(['pending']);
  });

  it('for now (4xx): the invitation stands, as after any other failed send', async () => {
    const env = await newEnvironment();
    const m = await member(env);
    const email = uniqueEmail('busy');
    smtp.refusedForNow.add(email);
    const res = await m.graphql(INVITE, { email });
    expect(res.data.inviteUser).toMatchObject({ __typename: 'UserInvited', invitation: { status: 'Pending' } });
    expect((await storedInvitations(env, email)).map((i) => i.state)).toEqual(['pending']);
  });

  it('on resend: InviteeEmailNotDeliverable, the invitation left pending; a delivered one is resent', async () => {
    const env = await newEnvironment();
    const m = await member(env);
    const email = uniqueEmail('later-bounce');
    const invited = await m.graphql(INVITE, { email });
    const id = invited.data.inviteUser.invitation.id as string;
    expect(smtp.delivered()).toContain(email);

    const resent = await m.graphql(RESEND, { id });
    expect(resent.data.resendInvitation).toEqual({ __typename: 'InvitationResent', invitation: { id } });

    smtp.refusedForGood.add(email);
    const refused = await m.graphql(RESEND, { id });
    expect(refused.data.resendInvitation).toEqual({ __typename: 'InviteeEmailNotDeliverable', email });
    expect((await storedInvitations(env, email)).map((i) => i.state)).toEqual(['pending']);
    const rest = await m.http.post(`/_widgets/UserManagement/invites/${id}/resend`, {});
    expect(rest).toMatchObject({ status: 400, body: { code: 'invitee_email_not_deliverable' } });
  });
});

describe('an organization at its pending-invitation quota', () => {
  it('is blocked from sending invites: the declared variant, the message the widget shows, nothing stored', async () => {
    const env = await newEnvironment();
    const m = await member(env);
    for (const label of ['first', 'second']) {
      const res = await m.graphql(INVITE, { email: uniqueEmail(label) });
      expect(res.data.inviteUser.__typename).toBe('UserInvited');
    }
    const third = uniqueEmail('third');
    const blocked = await m.http.post('/client/graphql', {
      query: 'mutation ($email: String!) { inviteUser(input: { email: $email }) { __typename } }',
      variables: { email: third },
    });
    expect(blocked.body).toEqual({ data: { inviteUser: { __typename: 'OrganizationBlockedFromSendingInvites' } } });
    const rest = await m.http.post('/_widgets/UserManagement/invite-user', { email: third, roles: [] });
    expect(rest.status).toBe(400);
    expect(rest.body).toMatchObject({
      code: 'organization_blocked_from_sending_invites',
      message: 'This organization is not allowed to send invites.',
    });
    expect(await storedInvitations(env, third)).toEqual([]);
    expect(smtp.delivered()).not.toContain(third);
  });
});
