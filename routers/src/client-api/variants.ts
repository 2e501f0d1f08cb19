// The one place where a refusal (an ApiError) becomes a variant the client schema declares (its
// mutations' result unions: `DailyEmailQuotaExceeded`, `MemberNotFound`, ...). The typed tRPC
// procedures (`client.*`) answer these variants, and GraphQL's resolvers run those procedures
// (graphql/caller.ts); REST renders the ApiError itself.
import { type ApiError, toApiError } from '../kernel/errors.ts';

/** A variant carrying the refusal's message. */
const said =
  <N extends string>(name: N) =>
  (error: ApiError) => ({ __typename: name, message: error.message });

/** A variant carrying what the service put in the refusal's `detail` (the invitee's e-mail, the user id). */
const carrying =
  <P extends object>() =>
  <N extends string>(name: N) =>
  (error: ApiError) =>
    ({ __typename: name, ...error.detail }) as { __typename: N } & P;
const withEmail = carrying<{ email: string }>();
const withUserId = carrying<{ userId: string }>();

/** A variant with no payload (GraphQL's `_placeholder`). */
const placeholder =
  <N extends string>(name: N) =>
  () => ({ __typename: name, _placeholder: true as const });

/** Elevated access refused: expired or never granted (`detail.expired`), each its own variant. */
const elevation =
  <E extends string, I extends string>(expired: E, invalid: I) =>
  (error: ApiError) =>
    error.detail?.expired ? said(expired)(error) : said(invalid)(error);

interface PasswordViolation {
  code: string;
  message: string;
  minimumLength: number | null;
  maximumLength: number | null;
  strengthSuggestions: string[];
}

const policyViolation = (error: ApiError) => ({
  __typename: 'PasswordPolicyViolation' as const,
  message: error.message,
  code: String(error.detail?.violationCode),
  violations: (error.detail?.violations ?? []) as PasswordViolation[],
});

/** Per operation, the declared variant of each refusal code; any other refusal stays an error. */
const DECLARED = {
  sendVerificationCode: { too_many_verification_codes: said('DailyEmailQuotaExceeded') },
  verifyCurrentEmail: {
    code_expired: said('VerificationCodeExpired'),
    code_already_used: said('VerificationCodePreviouslyUsed'),
    too_many_attempts: said('VerificationTooManyAttempts'),
    invalid_code: said('VerificationCodeIncorrect'),
  },
  sendEmailChange: {
    too_many_verification_codes: said('DailyEmailQuotaExceeded'),
    email_managed_by_directory: said('EmailManagedByProvider'),
    email_already_used: said('EmailNotAvailable'),
    elevated_access_required: elevation('IdentityVerificationExpired', 'IdentityVerificationInvalid'),
    invalid_email: said('InvalidEmail'),
    email_unchanged: said('InvalidEmail'),
  },
  confirmEmailChange: {
    code_expired: said('EmailChangeCodeExpired'),
    code_already_used: said('EmailChangeCodePreviouslyUsed'),
    too_many_attempts: said('EmailChangeTooManyAttempts'),
    invalid_code: said('EmailChangeCodeIncorrect'),
    no_pending_email_change: said('NoPendingEmailChange'),
    email_managed_by_directory: said('EmailManagedByProvider'),
    email_already_used: said('EmailNotAvailable'),
    elevated_access_required: elevation('IdentityVerificationExpired', 'IdentityVerificationInvalid'),
  },
  createPassword: {
    elevated_access_required: elevation('ElevatedAccessTokenExpired', 'ElevatedAccessTokenInvalid'),
    password_already_set: placeholder('UserAlreadyHasPassword'),
    password_strength_error: policyViolation,
  },
  updatePassword: {
    invalid_credentials: placeholder('IncorrectPassword'),
    password_strength_error: policyViolation,
  },
  updateProfile: { invalid_locale: placeholder('InvalidLocale') },
  revokeSession: { entity_not_found: carrying<{ sessionId: string }>()('SessionNotFound') },
  inviteUser: {
    user_already_exists: withEmail('InviteeAlreadyMember'),
    user_already_invited: withEmail('InviteeAlreadyInvited'),
    invalid_email: withEmail('InvalidInviteeEmail'),
    invalid_role: carrying<{ roleSlug: string | null }>()('InvalidInviteeRole'),
    invalid_expiry: placeholder('InvalidInvitationExpiry'),
    invitee_email_not_deliverable: withEmail('InviteeEmailNotDeliverable'),
    organization_blocked_from_sending_invites: placeholder('OrganizationBlockedFromSendingInvites'),
  },
  resendInvitation: {
    entity_not_found: withUserId('ResendInvitationNotFound'),
    invitation_already_accepted: withUserId('InviteeAlreadyAccepted'),
    invitee_email_not_deliverable: withEmail('InviteeEmailNotDeliverable'),
  },
  revokeInvitation: {
    entity_not_found: withUserId('InvitationNotFound'),
    invitation_not_pending: withUserId('InvitationNotPending'),
  },
  removeMember: {
    entity_not_found: withUserId('MemberNotFound'),
    member_managed_by_directory: withUserId('MemberIsManagedByDirectory'),
  },
  updateMemberRole: {
    entity_not_found: withUserId('MemberNotFound'),
    invalid_role: carrying<{ roleSlugs: string[] }>()('RoleNotFound'),
  },
} satisfies Record<string, Record<string, (error: ApiError) => { __typename: string }>>;

export type DeclaringOperation = keyof typeof DECLARED;
type Makers<O extends DeclaringOperation> = (typeof DECLARED)[O];
/** The declared variants of an operation's refusals. */
export type VariantOf<O extends DeclaringOperation> = Makers<O>[keyof Makers<O>] extends (error: ApiError) => infer V
  ? V
  : never;

/**
 * Runs an operation; a refusal it declares (by the ApiError's code) is answered as that variant,
 * anything else is thrown on.
 */
export async function declared<O extends DeclaringOperation, T>(
  operation: O,
  run: () => Promise<T>,
): Promise<T | VariantOf<O>> {
  try {
    return await run();
  } catch (error) {
    const api = toApiError(error);
    const makers: Record<string, (error: ApiError) => unknown> = DECLARED[operation];
    const make = api && Object.hasOwn(makers, api.apiCode) ? makers[api.apiCode] : undefined;
    if (!api || !make) throw error;
    return make(api) as VariantOf<O>;
  }
}
