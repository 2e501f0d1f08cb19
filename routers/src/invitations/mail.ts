import type { MailMessage } from '../kernel/deps.ts';

export interface InvitationMail {
  email: string;
  acceptUrl: string;
  expiresAt: Date;
  organizationName: string | null;
  inviterEmail: string | null;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string);

/** The invitation e-mail: plain text and HTML, both carrying the accept link. */
export function invitationMessage(mail: InvitationMail): MailMessage {
  const into = mail.organizationName ? ` to join ${mail.organizationName}` : '';
  const by = mail.inviterEmail ? `${mail.inviterEmail} has invited you${into}.` : `You have been invited${into}.`;
  const until = `The invitation expires on ${mail.expiresAt.toISOString().slice(0, 10)}.`;
  return {
    to: mail.email,
    subject: mail.organizationName ? `You're invited to join ${mail.organizationName}` : "You're invited",
    text: `${by}\n\nAccept the invitation:\n${mail.acceptUrl}\n\n${until}\n`,
    html:
      `<p>${escapeHtml(by)}</p>` +
      `<p><a href="${escapeHtml(mail.acceptUrl)}">Accept the invitation</a></p>` +
      `<p>${escapeHtml(until)}</p>`,
  };
}
