import { escapeHtml } from '../invitations/mail.ts';
import type { MailMessage } from '../kernel/deps.ts';

const WHAT: Record<string, string> = {
  domain_verification: 'verify your domain',
  sso: 'review your SSO connection',
  dsync: 'set up directory sync',
  log_streams: 'stream your audit logs to your SIEM',
  audit_logs: 'review and export your audit logs',
};

/** The e-mail that hands an IT admin a portal link (`admin_emails`): plain text and HTML. */
export function portalLinkMessage(to: string, link: string, intent: string, organizationName: string): MailMessage {
  const purpose = `Use this link to ${WHAT[intent] ?? 'open the admin portal'} for ${organizationName}.`;
  const validity = 'The link works once and expires in 5 minutes.';
  return {
    to,
    subject: `Admin portal for ${organizationName}`,
    text: `${purpose}\n\n${link}\n\n${validity}\n`,
    html:
      `<p>${escapeHtml(purpose)}</p>` +
      `<p><a href="${escapeHtml(link)}">Open the admin portal</a></p>` +
      `<p>${escapeHtml(validity)}</p>`,
  };
}
