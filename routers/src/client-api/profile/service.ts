import { randomInt } from 'node:crypto';
import { newId, type SessionChallengePurpose } from '@atrium/db';
import type { z } from 'zod';
import { MailRecipientRefused } from '../../context.ts';
import { ApiError, badRequest, type FieldError, forbidden, notFound } from '../../errors.ts';
import { userIdByEmail } from '../../invitations/store.ts';
import { randomBase62, sameDigest, sha256Hex } from '../../lib/random.ts';
import { membershipStatus } from '../../organization-memberships/store.ts';
import { PASSWORD_POLICY, UpdateUserInput, type User } from '../../users/schemas.ts';
import { getUser, updateUser } from '../../users/service.ts';
import { findUser } from '../../users/store.ts';
import { type ClientScope, requireUser } from '../principal.ts';
import { type CodePurpose, verificationCodeMessage } from './mail.ts';
import {
  codesSentSince,
  consumeChallenge,
  consumeOpenChallenges,
  countWrongCode,
  deleteChallenge,
  hasElevatedAccess,
  insertChallenge,
  openChallenge,
  type SessionChallengeRow,
} from './store.ts';

/** The caller's own user: UserProfile (`GET /_widgets/UserProfile/me`), GraphQL `me`, `client.me`. */
export function getMe(scope: ClientScope): Promise<User> {
  return getUser(scope, requireUser(scope));
}

/** Whether the caller has a password stored (GraphQL `User.passwordSet`, only on the caller's own user). */
export async function ownPasswordSet(scope: ClientScope): Promise<boolean> {
  const row = await findUser(scope.db, scope.env.id, requireUser(scope));
  return row.passwordHash !== null;
}

/** A user of the token's organization (any membership of it); anyone else is 404, as if absent. */
export async function getOrganizationUser(scope: ClientScope, userId: string): Promise<User> {
  const status = await membershipStatus(scope.db, scope.env.id, scope.client.organizationId, userId);
  if (status === undefined) throw notFound('user', userId);
  return getUser(scope, userId);
}

/** What a profile update sends: absent leaves a field, `""` or null clears it. */
export interface ProfileChanges {
  firstName?: string | null | undefined;
  lastName?: string | null | undefined;
  locale?: string | null | undefined;
}

export type ProfileResult = { kind: 'updated'; user: User } | { kind: 'invalid_locale'; message: string };

/** The API's field names for the profile's (the checks are the users API's own). */
const FIELDS: Record<string, string> = { first_name: 'firstName', last_name: 'lastName', locale: 'locale' };

const cleared = (value: string | null | undefined) => (value === undefined ? undefined : value || null);

/**
 * Updates the caller's names and locale through the users service (its checks, `user.updated`).
 * An invalid BCP 47 locale is a result, not an error (GraphQL's InvalidLocale); any other
 * invalid field is 400 with the field named. Nothing is stored unless everything is valid.
 */
export async function updateProfile(scope: ClientScope, changes: ProfileChanges): Promise<ProfileResult> {
  const parsed = UpdateUserInput.safeParse({
    id: requireUser(scope),
    first_name: cleared(changes.firstName),
    last_name: cleared(changes.lastName),
    locale: cleared(changes.locale),
  });
  if (!parsed.success) {
    const errors: FieldError[] = parsed.error.issues.map((issue) => ({
      field: FIELDS[String(issue.path[0])] ?? String(issue.path[0]),
      code: `${FIELDS[String(issue.path[0])] ?? 'field'}_invalid`,
      message: issue.message,
    }));
    const locale = errors.find((e) => e.field === 'locale');
    if (locale && errors.length === 1) return { kind: 'invalid_locale', message: locale.message };
    throw new ApiError(400, 'invalid_request_parameters', errors.map((e) => e.message).join('; '), errors);
  }
  return { kind: 'updated', user: await updateUser(scope, parsed.data as z.infer<typeof UpdateUserInput>) };
}

// "Edit email" of the UserProfile widget: prove the current address with a mailed code, which
// grants elevated access for a few minutes; with it, a code mailed to the new address changes it.

/** How long a mailed code and the elevated access it grants last. */
export const CODE_TTL_MINUTES = 10;
const CODE_TTL_MS = CODE_TTL_MINUTES * 60_000;
const ELEVATED_ACCESS_TTL_MS = 10 * 60_000;
/** Wrong codes a challenge takes before it is dead (a new code must be asked for). */
export const MAX_WRONG_CODES = 5;
/** Codes a session may ask for within CODE_TTL_MINUTES (each is an e-mail sent). */
export const MAX_CODES_PER_WINDOW = 5;

const newCode = () => String(randomInt(0, 1_000_000)).padStart(6, '0');
const codeHash = (challengeId: string, code: string) => sha256Hex(`${challengeId}:${code}`);

export interface ElevatedAccess {
  elevatedAccessToken: string;
  expiresAt: string;
}

/**
 * Mails a fresh code for `purpose` to `email` and stores its hash; an older open code of the
 * session for the same purpose dies. Without a mailer the code could reach no one: 400. A code
 * the mail server refuses or cannot take is not kept.
 */
async function mailCode(
  scope: ClientScope,
  purpose: CodePurpose,
  email: string,
): Promise<{ id: string; expiresAt: Date }> {
  const mailer = scope.deps.mailer;
  if (!mailer) {
    throw badRequest(
      'email_not_configured',
      'This server sends no e-mail (SMTP_URL is not set), so it cannot send a verification code.',
    );
  }
  const now = scope.now();
  const sessionId = scope.client.sessionId;
  if ((await codesSentSince(scope.db, sessionId, new Date(now.getTime() - CODE_TTL_MS))) >= MAX_CODES_PER_WINDOW) {
    throw new ApiError(
      429,
      'too_many_verification_codes',
      `At most ${MAX_CODES_PER_WINDOW} verification codes are sent in ${CODE_TTL_MINUTES} minutes; try again later.`,
    );
  }
  const id = newId('sessionChallenge');
  const code = newCode();
  const expiresAt = new Date(now.getTime() + CODE_TTL_MS);
  await scope.db.transaction(async (tx) => {
    await consumeOpenChallenges(tx, sessionId, [purpose], now);
    await insertChallenge(tx, {
      id,
      environmentId: scope.env.id,
      sessionId,
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
    scope.deps.log.warn({ session_id: sessionId, purpose, reason }, 'a verification code could not be sent');
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
    sessionId: scope.client.sessionId,
    purpose: 'elevated_access',
    email: null,
    secretHash: sha256Hex(token),
    expiresAt,
  });
  return { elevatedAccessToken: token, expiresAt: expiresAt.toISOString() };
}

type CodeCheck<T> = { kind: 'right'; value: T } | { kind: 'wrong'; left: number } | { kind: 'none' };

/**
 * Checks `code` against the session's open challenge of `purpose` (the one with `id` when given),
 * locked, so two tries at once both count. A right code consumes it and runs `then` in the same
 * transaction; a wrong one is counted (committed) and refused with the tries left.
 */
async function takeCode<T>(
  scope: ClientScope,
  purpose: SessionChallengePurpose,
  code: string,
  id: string | undefined,
  then: (db: ClientScope['db'], challenge: SessionChallengeRow) => Promise<T>,
): Promise<T> {
  const now = scope.now();
  const checked = await scope.db.transaction(async (tx): Promise<CodeCheck<T>> => {
    const challenge = await openChallenge(tx, scope.client.sessionId, purpose, now, id);
    if (!challenge || challenge.attempts >= MAX_WRONG_CODES) return { kind: 'none' };
    if (!sameDigest(challenge.secretHash, codeHash(challenge.id, code))) {
      return { kind: 'wrong', left: MAX_WRONG_CODES - (await countWrongCode(tx, challenge.id)) };
    }
    await consumeChallenge(tx, challenge.id, now);
    return { kind: 'right', value: await then(tx, challenge) };
  });
  if (checked.kind === 'right') return checked.value;
  if (checked.kind === 'wrong' && checked.left > 0) {
    throw badRequest(
      'invalid_code',
      `The code is not right: ${checked.left} ${checked.left === 1 ? 'try' : 'tries'} left.`,
    );
  }
  throw badRequest('code_expired', 'The code has expired or was tried too often: ask for a new one.');
}

/** 403 unless `token` is live elevated access of the caller's session. */
async function requireElevatedAccess(scope: ClientScope, token: string | undefined): Promise<void> {
  if (token && (await hasElevatedAccess(scope.db, scope.client.sessionId, sha256Hex(token), scope.now()))) return;
  throw forbidden(
    'elevated_access_required',
    'Verify your identity first: this needs the code sent to your current e-mail address.',
  );
}

/** `POST /_widgets/UserProfile/send-verification`: a code to the caller's current address. */
export async function sendIdentityCode(scope: ClientScope) {
  const me = await getMe(scope);
  const { id } = await mailCode(scope, 'identity', me.email);
  return { authenticationChallenge: id, type: 'EmailVerification' as const };
}

/** `POST /_widgets/UserProfile/verify`: the right code grants elevated access. */
export function verifyIdentityCode(scope: ClientScope, challengeId: string, code: string): Promise<ElevatedAccess> {
  requireUser(scope);
  return takeCode(scope, 'identity', code, challengeId, (tx) => grantElevatedAccess(scope, tx));
}

/** `GET /_widgets/UserProfile/authentication-information`: Atrium's one method, the password, and its policy. */
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
 * `POST /_widgets/UserProfile/send-email-change` (elevated): a code to the new address. The
 * address must be valid, new, and no other user's of the environment (409), as the update will be.
 */
export async function sendEmailChangeCode(scope: ClientScope, elevated: string | undefined, newEmail: string) {
  await requireElevatedAccess(scope, elevated);
  const parsed = UpdateUserInput.shape.email.safeParse(newEmail);
  if (!parsed.success || parsed.data === undefined) {
    throw new ApiError(422, 'invalid_email', 'The new e-mail address is not a valid address.');
  }
  const me = await getMe(scope);
  if (parsed.data.toLowerCase() === me.email.toLowerCase()) {
    throw badRequest('email_unchanged', 'That is already your e-mail address.');
  }
  if ((await userIdByEmail(scope.db, scope.env.id, parsed.data)) !== undefined) {
    throw new ApiError(409, 'email_already_used', 'Another user already has this e-mail address.');
  }
  const { expiresAt } = await mailCode(scope, 'email_change', parsed.data);
  return { expiresAt: expiresAt.toISOString() };
}

/**
 * `POST /_widgets/UserProfile/verify-email-change` (elevated): the right code sets the address
 * it was sent to, verified, through the users service (its uniqueness, `user.updated`), and
 * grants fresh elevated access, all in one transaction.
 */
export async function verifyEmailChange(scope: ClientScope, elevated: string | undefined, code: string) {
  await requireElevatedAccess(scope, elevated);
  const userId = requireUser(scope);
  return takeCode(scope, 'email_change', code, undefined, async (tx, challenge) => {
    const within = { ...scope, db: tx };
    const user = await updateUser(within, { id: userId, email: challenge.email ?? '', email_verified: true });
    return { user, ...(await grantElevatedAccess(scope, tx)) };
  });
}

/** `POST /_widgets/UserProfile/create-password` (elevated): a first password; one already set is not replaced here. */
export async function createOwnPassword(scope: ClientScope, elevated: string | undefined, password: string) {
  await requireElevatedAccess(scope, elevated);
  if (await ownPasswordSet(scope)) throw badRequest('password_already_set', 'A password is already set.');
  if (password.length < PASSWORD_POLICY.minLength || password.length > PASSWORD_POLICY.maxLength) {
    throw badRequest(
      'password_strength_error',
      `A password needs ${PASSWORD_POLICY.minLength} to ${PASSWORD_POLICY.maxLength} characters.`,
    );
  }
  await updateUser(scope, { id: requireUser(scope), password });
  return { success: true };
}
