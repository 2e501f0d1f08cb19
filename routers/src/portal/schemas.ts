import { z } from 'zod';
import { Id } from '../common/schemas.ts';

/** An absolute http(s) URL: the only places the portal page links or sends the admin to. */
export function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol, username, password } = new URL(value);
  return (protocol === 'http:' || protocol === 'https:') && !username && !password;
}

const PortalUrl = z
  .string()
  .max(2048)
  .refine(isHttpUrl, { message: 'must be an absolute http or https URL' })
  .meta({ description: 'An absolute http(s) URL.', example: 'https://app.example.com/settings' });

/** `adminPortal.generateLink` as the SDK sends it (snake_case; absent keys are left out). */
export const GeneratePortalLinkInput = z.object({
  /** Checked by the service, so that an upstream intent Atrium lacks gets its own message. */
  intent: z.string().max(64).optional(),
  organization: Id,
  return_url: PortalUrl.optional(),
  success_url: PortalUrl.optional(),
  intent_options: z
    .object({
      sso: z.object({ bookmark_slug: z.string().max(256).optional(), provider_type: z.string().max(64).optional() }),
    })
    .optional(),
  admin_emails: z.array(z.string().trim().max(320).pipe(z.email())).max(20).optional(),
});
export type GeneratePortalLinkInput = z.infer<typeof GeneratePortalLinkInput>;

export const PortalLink = z.object({ link: z.string() }).meta({ id: 'PortalLink' });
export type PortalLink = z.infer<typeof PortalLink>;
