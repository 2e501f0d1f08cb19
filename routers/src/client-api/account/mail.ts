import { escapeHtml } from '../../invitations/mail.ts';
import type { MailMessage } from '../../kernel/deps.ts';

/** Why a code is mailed: to prove the current address, or to confirm a new one. */
export type CodePurpose = 'identity' | 'email_change';

/** The verification-code e-mail: plain text and HTML, both carrying the code and how long it lasts. */
export function verificationCodeMessage(to: string, code: string, purpose: CodePurpose, minutes: number): MailMessage {
  const why =
    purpose === 'identity'
      ? 'Use this code to confirm it is you before you change your account.'
      : 'Use this code to confirm your new e-mail address.';
  const until = `The code expires in ${minutes} minutes. If you did not ask for it, ignore this e-mail.`;
  return {
    to,
    subject: `Your verification code: ${code}`,
    text: `${why}\n\n${code}\n\n${until}\n`,
    html: `<p>${escapeHtml(why)}</p><p style="font-size:1.5em;letter-spacing:0.2em"><strong>${code}</strong></p><p>${escapeHtml(until)}</p>`,
  };
}
