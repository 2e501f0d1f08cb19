import { loadConfig } from '@atrium/server';
import { describe, expect, it } from 'vitest';

describe('invitation settings', () => {
  it('reads SMTP_URL, SMTP_FROM, SMTP_TIMEOUT_MS and ATRIUM_INVITATION_URL; unset, no mail', () => {
    expect(loadConfig({}).smtp).toBeUndefined();
    expect(loadConfig({}).invitationUrl).toBeUndefined();
    const config = loadConfig({
      SMTP_URL: 'smtps://user:secret@mail.example.com:465',
      SMTP_FROM: 'Acme <no-reply@acme.com>',
      SMTP_TIMEOUT_MS: '3000',
      ATRIUM_INVITATION_URL: 'https://app.acme.com/invite?token={token}',
      ATRIUM_QUOTA_PENDING_INVITATIONS_PER_ORGANIZATION: '5',
    });
    expect(config.smtp).toEqual({
      url: 'smtps://user:secret@mail.example.com:465',
      from: 'Acme <no-reply@acme.com>',
      timeoutMs: 3000,
    });
    expect(config.invitationUrl).toBe('https://app.acme.com/invite?token={token}');
    expect(config.quotas.pendingInvitationsPerOrganization).toBe(5);
  });

  it.each([
    [{ SMTP_URL: 'smtp://127.0.0.1:25' }, /SMTP_FROM/],
    [{ SMTP_URL: 'http://mail.example.com', SMTP_FROM: 'a@b.com' }, /SMTP_URL/],
    [{ ATRIUM_INVITATION_URL: 'https://app.acme.com/invite' }, /\{token\}/],
    [{ ATRIUM_INVITATION_URL: 'javascript:{token}' }, /ATRIUM_INVITATION_URL/],
  ])('refuses %o at start', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
