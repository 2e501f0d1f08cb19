import { randomInt } from 'node:crypto';
import { newId, type SessionChallengePurpose } from '@atrium/db';
import { MailRecipientRefused } from '../../kernel/deps.ts';
import { ApiError, badRequest, type FieldError, rateLimited } from '../../kernel/errors.ts';
import { type ClientScope, requireUser } from '../../kernel/principals.ts';
import { verifyPassword } from '../../lib/password.ts';
import { randomBase62, sameDigest, sha256Hex } from '../../lib/random.ts';
import { directoryManagesUser } from '../../organization-memberships/store.ts';
import { consumeSharedWindow, refundSharedWindow } from '../../rate-limits/service.ts';
import {
  type ChallengeHolder,
  challengeToCheck,
  consumeChallenge,
  consumeOpenChallenges,
  countWrongCode,
  deleteChallenge,
  elevatedAccessOf,
  insertChallenge,
  type SessionChallengeRow,
} from '../../session-challenges/store.ts';
import { PASSWORD_POLICY, UpdateUserInput, type User } from '../../users/schemas.ts';
import { updateUser } from '../../users/service.ts';
import { findUser, userIdByEmail } from '../../users/store.ts';
import { getMe, ownPasswordSet } from '../profile/service.ts';
import { type CodePurpose, verificationCodeMessage } from './mail.ts';

// The caller's account, for widgets REST, GraphQL and `client.account.*`. UserProfile's "Edit
// email": prove the current address with a mailed code, which grants elevated access for a few
// minutes; with it, a code mailed to the new address changes it. UserSecurity's "Change password".
// A refusal is an ApiError (the status and code REST answers with); the client schema's
// declared variants are made of them in one place (client-api/variants.ts).

/** How long a mailed code and the elevated access it grants last. */
export const CODE_TTL_MINUTES = 10;
const CODE_TTL_MS = CODE_TTL_MINUTES * 60_000;
const ELEVATED_ACCESS_TTL_MS = 10 * 60_000;
/** Wrong codes a challenge takes before it is dead (a new code must be asked for). */
export const MAX_WRONG_CODES = 5;
/** Codes a user may ask for within CODE_TTL_MINUTES, whatever their sessions and tokens (each is an e-mail sent). */
export const MAX_CODES_PER_WINDOW = 5;
/**
 * Wrong current passwords a user may give within the window, whatever their sessions and tokens
 * (each costs a scrypt check; guessing stays slow).
 */
export const MAX_PASSWORD_FAILURES = 5;
const PASSWORD_FAILURE_WINDOW_MS = CODE_TTL_MS;
const DAY_MS = 24 * 60 * 60_000;
/** Codes to a new address a user may ask for per day (on top of the codes per 10 minutes). */
export const MAX_EMAIL_CHANGE_CODES_PER_DAY = 10;
/** Codes any users of the environment may have mailed to one new address per day (a third party's inbox). */
export const MAX_CODES_PER_ADDRESS_PER_DAY = 3;

/**
 * Each limit is a shared window (rate-limits/service.ts): one upsert that counts and answers the
 * count, so concurrent requests, on any process, are admitted at most `max` times per window.
 * Windows are fixed (aligned to the database's clock); a refused request counts too.
 */
interface AccountLimit {
  bucket: string;
  max: number;
  windowMs: number;
  /** What the refusal says. */
  message: string;
}

const codesOf = (userId: string): AccountLimit => ({
  bucket: `account-codes:${userId}`,
  max: MAX_CODES_PER_WINDOW,
  windowMs: CODE_TTL_MS,
  message: `At most ${MAX_CODES_PER_WINDOW} verification codes are sent in ${CODE_TTL_MINUTES} minutes; try again later.`,
});
const emailChangesOf = (userId: string): AccountLimit => ({
  bucket: `account-email-changes:${userId}`,
  max: MAX_EMAIL_CHANGE_CODES_PER_DAY,
  windowMs: DAY_MS,
  message: `At most ${MAX_EMAIL_CHANGE_CODES_PER_DAY} codes to a new address are sent in a day; try again tomorrow.`,
});
const codesTo = (environmentId: string, email: string): AccountLimit => ({
  bucket: `account-codes-to:${environmentId}:${email.toLowerCase()}`,
  max: MAX_CODES_PER_ADDRESS_PER_DAY,
  windowMs: DAY_MS,
  message: `At most ${MAX_CODES_PER_ADDRESS_PER_DAY} codes are sent to one address in a day; try again tomorrow.`,
});
const passwordChecksOf = (userId: string): AccountLimit => ({
  bucket: `account-password-checks:${userId}`,
  max: MAX_PASSWORD_FAILURES,
  windowMs: PASSWORD_FAILURE_WINDOW_MS,
  message: `At most ${MAX_PASSWORD_FAILURES} wrong passwords are checked in ${CODE_TTL_MINUTES} minutes; try again later.`,
});

/** Counts one against the limit; over it, the seconds until its window ends. */
async function overLimit(scope: ClientScope, limit: AccountLimit): Promise<number | undefined> {
  const count = await consumeSharedWindow(scope.deps, limit.bucket, 1, limit.windowMs);
  return count.used > limit.max ? Math.max(1, Math.ceil(count.msLeft / 1000)) : undefined;
}

/** A refusal of the account's operations: REST's status and code, with the variant's payload in `detail`. */
const refusal = (status: number, code: string, message: string, detail?: Record<string, unknown>) =>
  new ApiError(status, code, message, undefined, undefined, detail);

export interface ElevatedAccess {
  elevatedAccessToken: string;
  expiresAt: string;
}

const newCode = () => String(randomInt(0, 1_000_000)).padStart(6, '0');
const codeHash = (challengeId: string, code: string) => sha256Hex(`${challengeId}:${code}`);

const tooManyCodes = (limit: AccountLimit, retryAfterSeconds: number) =>
  new ApiError(429, 'too_many_verification_codes', limit.message, undefined, retryAfterSeconds);

/**
 * Whose codes and elevated access these are: an operation-20 token's stored session (they die
 * with it), or for a widget token (no sign-in, so no session) the user's own, outside any session.
 */
function challengeHolder(scope: ClientScope): ChallengeHolder {
  const userId = requireUser(scope);
  return { userId, sessionId: scope.client.kind === 'client' ? scope.client.sessionId : null };
}

/**
 * Mails a fresh code for `purpose` to `email` and stores its hash; an older open code of the
 * session for the same purpose dies. The user's codes per 10 minutes, and `limits`, are counted
 * first (atomically: at most that many are mailed, however many ask at once). No mailer, a
 * recipient the mail server refuses, or a mail server out of reach are errors (no variant
 * declares them); the code is then not kept.
 */
async function mailCode(
  scope: ClientScope,
  purpose: CodePurpose,
  email: string,
  limits: AccountLimit[] = [],
): Promise<{ id: string; expiresAt: Date }> {
  const mailer = scope.deps.mailer;
  if (!mailer) {
    throw badRequest(
      'email_not_configured',
      'This server sends no e-mail (SMTP_URL is not set), so it cannot send a verification code.',
    );
  }
  const all = [codesOf(requireUser(scope)), ...limits];
  for (const limit of all) {
    const retryAfter = await overLimit(scope, limit);
    if (retryAfter !== undefined) throw tooManyCodes(limit, retryAfter);
  }
  const now = scope.now();
  const holder = challengeHolder(scope);
  const id = newId('sessionChallenge');
  const code = newCode();
  const expiresAt = new Date(now.getTime() + CODE_TTL_MS);
  await scope.db.transaction(async (tx) => {
    await consumeOpenChallenges(tx, holder, [purpose], now);
    await insertChallenge(tx, {
      id,
      environmentId: scope.env.id,
      ...holder,
      purpose,
      email,
      secretHash: codeHash(id, code),
      expiresAt,
    });
  });
  try {
    await mailer.send(verificationCodeMessage(email, code, purpose, CODE_TTL_MINUTES));
  } catch (error) {
    await deleteChallenge(scope.db, id);
    const reason = error instanceof Error ? error.message : String(error);
    scope.deps.log.warn(
      { session_id: holder.sessionId, user_id: holder.userId, purpose, reason },
      'a verification code could not be sent',
    );
    if (error instanceof MailRecipientRefused) {
      throw badRequest('email_not_deliverable', `The mail server refused ${email}: no code can be sent there.`);
    }
    throw new ApiError(503, 'email_unavailable', 'The verification code could not be sent; try again in a moment.');
  }
  return { id, expiresAt };
}

/** Grants the session elevated access: a new random token, kept as its SHA-256. */
async function grantElevatedAccess(scope: ClientScope, db: ClientScope['db']): Promise<ElevatedAccess> {
  const token = randomBase62(43);
  const expiresAt = new Date(scope.now().getTime() + ELEVATED_ACCESS_TTL_MS);
  await insertChallenge(db, {
    id: newId('sessionChallenge'),
    environmentId: scope.env.id,
    ...challengeHolder(scope),
    purpose: 'elevated_access',
    email: null,
    secretHash: sha256Hex(token),
    expiresAt,
  });
  return { elevatedAccessToken: token, expiresAt: expiresAt.toISOString() };
}

/** How a code check is refused (the variants each mutation declares are made of these codes). */
const CODE_REFUSALS = {
  used: () => refusal(400, 'code_already_used', 'This code was used already.'),
  expired: () => refusal(400, 'code_expired', 'The code has expired: ask for a new one.'),
  worn: () => refusal(400, 'too_many_attempts', 'The code was tried too often: ask for a new one.'),
  wrong: (left: number) =>
    refusal(400, 'invalid_code', `The code is not right: ${left} ${left === 1 ? 'try' : 'tries'} left.`),
};

/** No code to check: for `verifyCurrentEmail` an unknown challenge id reads as an expired code. */
const NO_IDENTITY_CODE = () => refusal(400, 'code_expired', 'No such code: ask for a new one.');
const NO_EMAIL_CHANGE_CODE = () =>
  refusal(400, 'no_pending_email_change', 'No code was sent to a new address: ask for one first.');

/**
 * Checks `code` against the session's challenge of `purpose` (the one with `id` when given),
 * locked, so two tries at once both count. A right code consumes it and runs `then` in the same
 * transaction; a wrong one is counted (committed) and refused with the tries left. Refusals leave
 * the transaction as values and are thrown once it committed (what it counted stays counted).
 */
async function takeCode<T>(
  scope: ClientScope,
  purpose: SessionChallengePurpose,
  code: string,
  id: string | undefined,
  none: () => ApiError,
  then: (db: ClientScope['db'], challenge: SessionChallengeRow) => Promise<T | ApiError>,
): Promise<T> {
  const now = scope.now();
  const outcome = await scope.db.transaction(async (tx): Promise<T | ApiError> => {
    const challenge = await challengeToCheck(tx, challengeHolder(scope), purpose, id);
    if (!challenge) return none();
    if (challenge.consumedAt) return CODE_REFUSALS.used();
    if (challenge.expiresAt.getTime() <= now.getTime()) return CODE_REFUSALS.expired();
    if (challenge.attempts >= MAX_WRONG_CODES) return CODE_REFUSALS.worn();
    if (!sameDigest(challenge.secretHash, codeHash(challenge.id, code))) {
      const left = MAX_WRONG_CODES - (await countWrongCode(tx, challenge.id));
      return left > 0 ? CODE_REFUSALS.wrong(left) : CODE_REFUSALS.worn();
    }
    await consumeChallenge(tx, challenge.id, now);
    return then(tx, challenge);
  });
  if (outcome instanceof ApiError) throw outcome;
  return outcome;
}

/**
 * Refuses unless `token` is live elevated access of the caller's session: 403, with `detail.expired`
 * telling an expired grant from none (the declared variants tell them apart).
 */
async function requireElevatedAccess(scope: ClientScope, token: string | undefined): Promise<void> {
  const access = token ? await elevatedAccessOf(scope.db, challengeHolder(scope), sha256Hex(token)) : undefined;
  if (access && access.expiresAt.getTime() > scope.now().getTime()) return;
  throw access
    ? refusal(403, 'elevated_access_required', 'Your verification has expired: verify your identity again.', {
        expired: true,
      })
    : refusal(
        403,
        'elevated_access_required',
        'Verify your identity first: this needs the code sent to your current e-mail address.',
        { expired: false },
      );
}

/** A directory provisions the user: their address is the directory's to change (as their membership is, members/service.ts). */
const managedByDirectory = () =>
  refusal(
    403,
    'email_managed_by_directory',
    "Your e-mail address is managed by your organization's directory: change it there.",
  );

const emailTaken = () => refusal(409, 'email_already_used', 'Another user already has this e-mail address.');

/** A code to the caller's current address (REST `send-verification`, GraphQL `sendVerificationCode`). */
export async function sendIdentityCode(scope: ClientScope) {
  const me = await getMe(scope);
  const sent = await mailCode(scope, 'identity', me.email);
  return { authenticationChallengeId: sent.id, expiresAt: sent.expiresAt.toISOString() };
}

/** The right code grants elevated access (REST `verify`, GraphQL `verifyCurrentEmail`). */
export function verifyIdentityCode(scope: ClientScope, challengeId: string, code: string): Promise<ElevatedAccess> {
  requireUser(scope);
  return takeCode(scope, 'identity', code, challengeId, NO_IDENTITY_CODE, (tx) => grantElevatedAccess(scope, tx));
}

/** The caller's one sign-in method, the password, and the policy (REST `authentication-information`). */
export async function authenticationInformation(scope: ClientScope) {
  const passwordSet = await ownPasswordSet(scope);
  return {
    data: {
      verificationMethods: {
        Password: { provider: 'Password' as const, isSetUp: passwordSet, lastUsed: null, isCurrentSession: false },
      },
      passwordSettings: {
        isPasswordNumberRequired: false,
        isPasswordPwnedRequired: false,
        isPasswordSymbolRequired: false,
        isPasswordUppercaseRequired: false,
        passwordMinimumLength: PASSWORD_POLICY.minLength,
        passwordMinimumStrength: 0,
      },
    },
  };
}

/**
 * Under elevated access, a code to the new address (REST `send-email-change`, GraphQL
 * `sendEmailChange`). The address must be valid, new, and no other user's of the environment.
 */
export async function sendEmailChangeCode(scope: ClientScope, elevated: string | undefined, newEmail: string) {
  await requireElevatedAccess(scope, elevated);
  const parsed = UpdateUserInput.shape.email.safeParse(newEmail);
  if (!parsed.success || parsed.data === undefined) {
    throw refusal(422, 'invalid_email', 'The new e-mail address is not a valid address.');
  }
  const me = await getMe(scope);
  if (await directoryManagesUser(scope.db, scope.env.id, me.id)) throw managedByDirectory();
  if (parsed.data.toLowerCase() === me.email.toLowerCase()) {
    throw refusal(400, 'email_unchanged', 'That is already your e-mail address.');
  }
  if ((await userIdByEmail(scope.db, scope.env.id, parsed.data)) !== undefined) throw emailTaken();
  // Bounded per user and per address too: the new address is anyone's inbox.
  const limits = [emailChangesOf(me.id), codesTo(scope.env.id, parsed.data)];
  const sent = await mailCode(scope, 'email_change', parsed.data, limits);
  return { expiresAt: sent.expiresAt.toISOString() };
}

/**
 * Under elevated access, the right code sets the address it was sent to, verified, through the
 * users service (its uniqueness, `user.updated`), and grants fresh elevated access, in one
 * transaction (REST `verify-email-change`, GraphQL `confirmEmailChange`).
 */
export async function confirmEmailChange(scope: ClientScope, elevated: string | undefined, code: string) {
  await requireElevatedAccess(scope, elevated);
  const userId = requireUser(scope);
  if (await directoryManagesUser(scope.db, scope.env.id, userId)) throw managedByDirectory();
  return takeCode(scope, 'email_change', code, undefined, NO_EMAIL_CHANGE_CODE, async (tx, challenge) => {
    const email = challenge.email ?? '';
    // Refused after the code was consumed: the transaction commits, and the refusal is thrown then.
    if ((await userIdByEmail(tx, scope.env.id, email)) !== undefined) return emailTaken();
    const user: User = await updateUser({ ...scope, db: tx }, { id: userId, email, email_verified: true });
    return { user, ...(await grantElevatedAccess(scope, tx)) };
  });
}

/** A password's violations of the policy (8 to 1024 characters; a new one differs from `current`). */
function violationsOf(password: string, current?: string) {
  const { minLength, maxLength } = PASSWORD_POLICY;
  const violations: Array<{
    code: string;
    message: string;
    minimumLength: number | null;
    maximumLength: number | null;
    strengthSuggestions: string[];
  }> = [];
  const add = (code: string, message: string, minimumLength: number | null, maximumLength: number | null) =>
    violations.push({ code, message, minimumLength, maximumLength, strengthSuggestions: [] });
  if (password.length < minLength)
    add('password_too_short', `A password needs at least ${minLength} characters.`, minLength, null);
  if (password.length > maxLength)
    add('password_too_long', `A password may have at most ${maxLength} characters.`, null, maxLength);
  if (current !== undefined && password === current)
    add('password_reused', 'The new password must differ from the current one.', null, null);
  return violations;
}

/**
 * REST's 400 `password_strength_error` with each violation in `errors` (snake_case, as the widgets
 * read them); GraphQL's PasswordPolicyViolation takes the first's code and the list from `detail`.
 */
function policyViolation(violations: ReturnType<typeof violationsOf>) {
  const [first] = violations as [ReturnType<typeof violationsOf>[number]];
  const errors = violations.map((v) => {
    const error: FieldError & { minimum_length?: number; maximum_length?: number } = {
      field: 'password',
      code: v.code,
      message: v.message,
    };
    if (v.minimumLength !== null) error.minimum_length = v.minimumLength;
    if (v.maximumLength !== null) error.maximum_length = v.maximumLength;
    return error;
  });
  return new ApiError(400, 'password_strength_error', first.message, errors, undefined, {
    violationCode: first.code,
    violations,
  });
}

/** Under elevated access, a first password; one already set is not replaced here (REST `create-password`). */
export async function createOwnPassword(scope: ClientScope, elevated: string | undefined, password: string) {
  await requireElevatedAccess(scope, elevated);
  if (await ownPasswordSet(scope)) throw refusal(400, 'password_already_set', 'A password is already set.');
  const violations = violationsOf(password);
  if (violations.length > 0) throw policyViolation(violations);
  await updateUser(scope, { id: requireUser(scope), password });
  return { success: true };
}

/**
 * The UserSecurity widget's "Change password" (REST `update-password`, GraphQL `updatePassword`):
 * the current password must match the stored one (a scrypt hash Atrium made; an imported hash of
 * another scheme, or none, matches nothing), then the new one is stored through the users service.
 */
export async function updateOwnPassword(scope: ClientScope, currentPassword: string, newPassword: string) {
  const row = await findUser(scope.db, scope.env.id, requireUser(scope));
  // Counted before the check (so concurrent guesses cannot all run), given back when it matched.
  const checks = passwordChecksOf(row.id);
  const retryAfter = await overLimit(scope, checks);
  if (retryAfter !== undefined) throw rateLimited(checks.message, retryAfter, 'too_many_password_attempts');
  const refund = () => refundSharedWindow(scope.deps, checks.bucket, 1, checks.windowMs);
  let matches: boolean;
  try {
    matches = row.passwordHash !== null && (await verifyPassword(scope.env.id, currentPassword, row.passwordHash));
  } catch (error) {
    await refund(); // not checked (the pool was full): not a wrong password
    throw error;
  }
  if (!matches) {
    // The widget recognises exactly this message and marks the current-password field.
    throw refusal(400, 'invalid_credentials', 'Invalid credentials');
  }
  await refund();
  const violations = violationsOf(newPassword, currentPassword);
  if (violations.length > 0) throw policyViolation(violations);
  await updateUser(scope, { id: row.id, password: newPassword });
  return { success: true };
}
