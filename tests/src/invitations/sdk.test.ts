import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '@atrium/rest-facade';
import type { Deps } from '@atrium/routers';
import { createSmtpMailer, type DevSmtpServer, startDevSmtp } from '@atrium/server';
import { BadRequestException, ConflictException, NotFoundException, WorkOS } from '@workos-inc/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/people.ts';
import { getWorld, newEnvironment } from '../helpers/world.ts';

/**
 * Invitations through the official SDK against a server whose deps send real e-mail over SMTP
 * (nodemailer) to an SMTP server on loopback (smtp-server), which parses what arrives.
 */
let mailbox: DevSmtpServer;
let server: Server;
let port: number;

const TEMPLATE = 'https://app.example.com/invite?invitation_token={token}';

beforeAll(async () => {
  const world = await getWorld();
  mailbox = await startDevSmtp();
  const deps: Deps = {
    ...world.deps,
    mailer: createSmtpMailer({ url: mailbox.url, from: 'Acme <no-reply@acme.test>', timeoutMs: 5_000 }),
    config: { ...world.deps.config, invitationUrl: TEMPLATE },
  };
  server = createServer(createApp(deps, { baseUrl: 'http://127.0.0.1' }).handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await mailbox.close();
});

async function sdk() {
  const env = await newEnvironment();
  const workos = new WorkOS(env.apiKey, { apiHostname: '127.0.0.1', port, https: false, clientId: env.clientId });
  return { env, workos };
}

/** The token in the accept link of a received message. */
function tokenIn(text: string): string {
  const match = text.match(/https:\/\/app\.example\.com\/invite\?invitation_token=([0-9A-Za-z]+)/);
  if (!match) throw new Error(`no accept link in:\n${text}`);
  return match[1] as string;
}

describe('invitations (official SDK, real SMTP)', () => {
  it('sends the e-mail with the accept link; the link is accepted through the SDK', async () => {
    const { workos } = await sdk();
    const org = await workos.organizations.createOrganization({ name: 'Acme' });
    const inviter = await workos.userManagement.createUser({ email: uniqueEmail('inviter') });
    const email = uniqueEmail('invitee');

    const sent = await workos.userManagement.sendInvitation({
      email,
      organizationId: org.id,
      inviterUserId: inviter.id,
      roleSlug: 'admin',
      expiresInDays: 5,
    });
    expect(sent).toEqual({
      object: 'invitation',
      id: expect.stringMatching(/^invitation_/),
      email,
      state: 'pending',
      acceptedAt: null,
      revokedAt: null,
      expiresAt: expect.any(String),
      organizationId: org.id,
      inviterUserId: inviter.id,
      acceptedUserId: null,
      roleSlug: 'admin',
      token: expect.any(String),
      acceptInvitationUrl: TEMPLATE.replace('{token}', sent.token),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(Date.parse(sent.expiresAt) - Date.parse(sent.createdAt)).toBe(5 * 24 * 60 * 60 * 1000);

    // The message arrived at the SMTP server, addressed to the invitee, with the link.
    const mail = await mailbox.next();
    expect(mail.to && !Array.isArray(mail.to) ? mail.to.text : mail.to).toBe(email);
    expect(mail.from?.value).toEqual([{ name: 'Acme', address: 'no-reply@acme.test' }]);
    expect(mail.subject).toBe("You're invited to join Acme");
    expect(mail.text).toContain(`${inviter.email} has invited you to join Acme.`);
    expect(mail.html || '').toContain(`href="${sent.acceptInvitationUrl}"`);
    const token = tokenIn(mail.text ?? '');
    expect(token).toBe(sent.token);

    // The application reads the token from the link, finds the invitation and accepts it.
    const found = await workos.userManagement.findInvitationByToken(token);
    expect(found).toEqual(sent);
    const accepted = await workos.userManagement.acceptInvitation(found.id);
    expect(accepted).toMatchObject({
      id: sent.id,
      state: 'accepted',
      acceptedAt: expect.any(String),
      acceptedUserId: expect.stringMatching(/^user_/),
      roleSlug: 'admin',
    });
    const user = await workos.userManagement.getUser(accepted.acceptedUserId as string);
    expect(user.email).toBe(email);
    expect(user.emailVerified).toBe(true);
    const memberships = await workos.userManagement.listOrganizationMemberships({ organizationId: org.id });
    expect(memberships.data.map((m) => [m.userId, m.status])).toEqual([[user.id, 'active']]);
    expect(await workos.userManagement.getInvitation(sent.id)).toEqual(accepted);

    // Accepted once: a second accept is refused.
    await expect(workos.userManagement.acceptInvitation(sent.id)).rejects.toBeInstanceOf(BadRequestException);
  });

  it('lists with filters, revokes, resends (a second e-mail), and names the events as the SDK types them', async () => {
    const { workos } = await sdk();
    const org = await workos.organizations.createOrganization({ name: 'Globex' });
    const emails = [uniqueEmail('a'), uniqueEmail('b')];
    const first = await workos.userManagement.sendInvitation({ email: emails[0] as string, organizationId: org.id });
    const second = await workos.userManagement.sendInvitation({ email: emails[1] as string });
    await mailbox.next();
    await mailbox.next();

    const byOrg = await workos.userManagement.listInvitations({ organizationId: org.id });
    expect(byOrg.data.map((i) => i.id)).toEqual([first.id]);
    const byEmail = await workos.userManagement.listInvitations({ email: emails[1] as string });
    expect(byEmail.data.map((i) => i.id)).toEqual([second.id]);
    const all = await (await workos.userManagement.listInvitations({})).autoPagination();
    expect(all.map((i) => i.id).sort()).toEqual([first.id, second.id].sort());

    const resent = await workos.userManagement.resendInvitation(first.id, { locale: 'en' });
    expect(resent.state).toBe('pending');
    const again = await mailbox.next();
    expect(tokenIn(again.text ?? '')).toBe(first.token);

    const revoked = await workos.userManagement.revokeInvitation(first.id);
    expect(revoked).toMatchObject({ state: 'revoked', revokedAt: expect.any(String) });
    await expect(workos.userManagement.resendInvitation(first.id)).rejects.toBeInstanceOf(BadRequestException);
    await expect(workos.userManagement.acceptInvitation(first.id)).rejects.toBeInstanceOf(BadRequestException);

    await expect(workos.userManagement.sendInvitation({ email: emails[1] as string })).rejects.toBeInstanceOf(
      ConflictException,
    );
    await expect(workos.userManagement.getInvitation('invitation_01HE8GSH8FQPASKSY27THRKRBP')).rejects.toBeInstanceOf(
      NotFoundException,
    );
    await expect(workos.userManagement.findInvitationByToken('nope')).rejects.toBeInstanceOf(NotFoundException);

    const { data: events } = await workos.events.listEvents({
      events: ['invitation.created', 'invitation.resent', 'invitation.revoked'],
    });
    expect(events.map((e) => e.event).sort()).toEqual(
      ['invitation.created', 'invitation.created', 'invitation.resent', 'invitation.revoked'].sort(),
    );
    const revokedEvent = events.find((e) => e.event === 'invitation.revoked');
    expect(revokedEvent?.data).toEqual({
      object: 'invitation',
      id: first.id,
      email: emails[0],
      state: 'revoked',
      acceptedAt: null,
      revokedAt: revoked.revokedAt,
      expiresAt: first.expiresAt,
      organizationId: org.id,
      inviterUserId: null,
      acceptedUserId: null,
      // None was sent: the organization's default role.
      roleSlug: 'member',
      createdAt: first.createdAt,
      updatedAt: revoked.updatedAt,
    });
  });
});
