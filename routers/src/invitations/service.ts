import { type Db, type InvitationState, newId } from '@atrium/db';
import type { z } from 'zod';
import { asList, iso, pageParams } from '../common/schemas.ts';
import { recordEvent } from '../events/record.ts';
import { MailRecipientRefused } from '../kernel/deps.ts';
import { ApiError, alreadyMember, conflict, invalid, rateLimited } from '../kernel/errors.ts';
import type { Scope } from '../kernel/scope.ts';
import { randomBase62, sha256Hex } from '../lib/random.ts';
import { addMembership } from '../organization-memberships/service.ts';
import { membershipStatus } from '../organization-memberships/store.ts';
import { requireOrganization } from '../organizations/lookup.ts';
import { type QuotaName, quotaKey, quotaLimit } from '../quotas.ts';
import { consumeSharedWindow, refundSharedWindow } from '../rate-limits/service.ts';
import { assertRoleSlugs } from '../roles/service.ts';
import { seal, unseal } from '../signing/material.ts';
import { toUser } from '../user-wire.ts';
import { findUser, insertUserUnlessTaken, userIdByEmail } from '../users/store.ts';
import { invitationMessage } from './mail.ts';
import {
  DEFAULT_EXPIRES_IN_DAYS,
  type Invitation,
  type InvitationEventData,
  type ListInvitationsInput,
  type ResendInvitationInput,
  type SendInvitationInput,
} from './schemas.ts';
import {
  assertBelowPendingInvitationsPerOrganization,
  expireLapsedInvitations,
  findInvitation,
  findInvitationByTokenHash,
  type InvitationRow,
  insertInvitation,
  pageOfInvitations,
  updateInvitationRow,
} from './store.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** 43 base62 characters: 256 bits, as many as 32 random bytes. */
const TOKEN_LENGTH = 43;

/** What a daily invitation limit counts: its quota name, and the one it is counted for. */
type DailyLimit = { name: QuotaName; key: string; what: string };

/** Resends of one invitation: one invitee of one organization (a re-invitation after revocation counts too). */
export const resendsOf = (environmentId: string, organizationId: string | null, email: string): DailyLimit => ({
  name: 'invitationResendsPerDay',
  key: `${environmentId}:${organizationId ?? ''}:${email.toLowerCase()}`,
  what: 'resends of an invitation',
});

/** Invitation e-mails of one organization (those without one count per environment). */
const mailsOf = (environmentId: string, organizationId: string | null): DailyLimit => ({
  name: 'invitationMailsPerOrganizationPerDay',
  key: organizationId ?? environmentId,
  what: 'invitation e-mails of an organization',
});

/**
 * Counts one against each daily limit (a shared window per UTC day: one upsert that counts and
 * answers, so concurrent requests on any process are admitted at most the limit); over one,
 * gives back what it counted and refuses with 429 `rate_limit_exceeded` and `Retry-After`.
 * Answers a function that gives the counts back (the request failed before anything was sent).
 */
async function countInvitationMail(scope: Scope, limits: DailyLimit[]): Promise<() => Promise<void>> {
  const counted: string[] = [];
  const giveBack = async () => {
    for (const bucket of counted) await refundSharedWindow(scope.deps, bucket, 1, DAY_MS);
  };
  for (const limit of limits) {
    const bucket = `${quotaKey(limit.name)}:${limit.key}`;
    const max = quotaLimit(scope.deps, limit.name);
    const count = await consumeSharedWindow(scope.deps, bucket, 1, DAY_MS);
    counted.push(bucket);
    if (count.used > max) {
      await giveBack();
      const message = `Rate limit exceeded: at most ${max} ${limit.what} per day (quota ${quotaKey(limit.name)}).`;
      throw rateLimited(message, count.msLeft / 1000);
    }
  }
  return giveBack;
}

/** Runs `send` with its mail counted first (when there is a mailer); a failure of `send` gives the count back. */
export async function mailCounted<T>(scope: Scope, limits: DailyLimit[], send: () => Promise<T>): Promise<T> {
  if (!scope.deps.mailer) return send();
  const giveBack = await countInvitationMail(scope, limits);
  try {
    return await send();
  } catch (error) {
    await giveBack();
    throw error;
  }
}

/** The state a reader sees: a pending invitation past `expires_at` is `expired`, marked or not. */
function stateOf(row: InvitationRow, now: Date): InvitationState {
  return row.state === 'pending' && row.expiresAt.getTime() <= now.getTime() ? 'expired' : row.state;
}

/** The accept link: the configured template with the token in place of `{token}`, or a link on this server. */
function acceptUrl(scope: Scope, token: string): string {
  const template = scope.deps.config.invitationUrl;
  const encoded = encodeURIComponent(token);
  if (template) return template.replaceAll('{token}', encoded);
  return `${scope.deps.tokens.issuer.replace(/\/+$/, '')}/invite?invitation_token=${encoded}`;
}

function tokenOf(scope: Scope, row: InvitationRow): string {
  return unseal(scope.deps.tokens.masterKey, row.id, row.tokenSealed, `The token of invitation ${row.id}`).toString(
    'utf8',
  );
}

/** The data of `invitation.*` events (no token: events fan out to webhooks). */
function toInvitationEvent(row: InvitationRow, now: Date): InvitationEventData {
  return {
    object: 'invitation',
    id: row.id,
    email: row.email,
    state: stateOf(row, now),
    accepted_at: row.acceptedAt ? iso(row.acceptedAt) : null,
    revoked_at: row.revokedAt ? iso(row.revokedAt) : null,
    expires_at: iso(row.expiresAt),
    organization_id: row.organizationId,
    inviter_user_id: row.inviterUserId,
    accepted_user_id: row.acceptedUserId,
    role_slug: row.roleSlug,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** The single place that turns an invitation row into its wire shape. */
export function toInvitation(scope: Scope, row: InvitationRow): Invitation {
  const token = tokenOf(scope, row);
  const { created_at, updated_at, ...fields } = toInvitationEvent(row, scope.now());
  return { ...fields, token, accept_invitation_url: acceptUrl(scope, token), created_at, updated_at };
}

const NOT_PENDING: Partial<Record<InvitationState, [code: string, message: string]>> = {
  accepted: ['invitation_already_accepted', 'The invitation was accepted already.'],
  revoked: ['invitation_revoked', 'The invitation was revoked.'],
  expired: ['invitation_expired', 'The invitation has expired.'],
};

/**
 * Accept, revoke and resend act on pending invitations only: 400 naming the state it is in. The
 * body carries `errors` too, which is what makes the SDK throw its `BadRequestException`.
 */
function assertPending(row: InvitationRow, now: Date): void {
  const refusal = NOT_PENDING[stateOf(row, now)];
  if (!refusal) return;
  const [code, message] = refusal;
  throw new ApiError(400, code, message, [{ field: 'state', code, message }]);
}

export async function getInvitation(scope: Scope, id: string): Promise<Invitation> {
  return toInvitation(scope, await findInvitation(scope.db, scope.env.id, id));
}

export async function findInvitationByToken(scope: Scope, token: string): Promise<Invitation> {
  return toInvitation(scope, await findInvitationByTokenHash(scope.db, scope.env.id, sha256Hex(token)));
}

export async function listInvitations(scope: Scope, input: z.infer<typeof ListInvitationsInput>) {
  const filter = { organizationId: input.organization_id, email: input.email };
  const page = await pageOfInvitations(scope.db, scope.env.id, pageParams(input), filter);
  return asList(page, (row) => toInvitation(scope, row));
}

/**
 * What became of an invitation's e-mail: `sent`; `refused` by the mail server for good (the
 * address cannot be delivered to); `failed` otherwise (logged; a resend may do); `none` without a mailer.
 */
export type MailOutcome = 'sent' | 'refused' | 'failed' | 'none';

/** An invitation and what became of its e-mail (the API answers the invitation; the widgets need both). */
export interface MailedInvitation {
  invitation: Invitation;
  mail: MailOutcome;
}

/**
 * Stores the invitation and records `invitation.created` in one transaction, then e-mails the
 * accept link when a mailer is configured (after the commit: a mail is never sent for an
 * invitation that does not exist). A failed send is logged; the invitation stands and can be resent.
 */
export async function sendInvitation(
  scope: Scope,
  input: z.infer<typeof SendInvitationInput>,
): Promise<MailedInvitation> {
  if (input.role_slug !== undefined && input.organization_id === undefined) {
    throw invalid([
      { field: 'role_slug', code: 'role_slug_invalid', message: 'role_slug needs an organization_id to apply to' },
    ]);
  }
  const limits = [mailsOf(scope.env.id, input.organization_id ?? null)];
  const { row, organizationName, inviterEmail } = await mailCounted(scope, limits, () => storeInvitation(scope, input));
  const invitation = toInvitation(scope, row);
  return { invitation, mail: await mailInvitation(scope, invitation, organizationName, inviterEmail) };
}

/** The new invitation and its `invitation.created`, in one transaction. */
function storeInvitation(scope: Scope, input: z.infer<typeof SendInvitationInput>) {
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    let organizationName: string | null = null;
    let roleSlug: string | undefined;
    if (input.organization_id !== undefined) {
      // NO KEY UPDATE: serialises the invitations counted against the organization's quota.
      organizationName = (await requireOrganization(tx, scope, input.organization_id, 'no key update')).name;
      // The invited role must exist now (unknown slug → 422); none sent stores the default role.
      roleSlug = (await assertRoleSlugs(tx, scope, input.organization_id, { roleSlug: input.role_slug }))[0]?.slug;
      const existing = await userIdByEmail(tx, scope.env.id, input.email);
      if (existing && (await membershipStatus(tx, scope.env.id, input.organization_id, existing))) {
        throw alreadyMember();
      }
    }
    const inviter = input.inviter_user_id ? await findUser(tx, scope.env.id, input.inviter_user_id) : undefined;
    await expireLapsedInvitations(tx, scope.env.id, input.organization_id ?? null, input.email, now);
    if (input.organization_id !== undefined) {
      await assertBelowPendingInvitationsPerOrganization(tx, scope, input.organization_id);
    }
    const id = newId('invitation');
    const token = randomBase62(TOKEN_LENGTH);
    const row = await insertInvitation(tx, {
      id,
      environmentId: scope.env.id,
      email: input.email,
      state: 'pending',
      organizationId: input.organization_id ?? null,
      inviterUserId: inviter?.id ?? null,
      roleSlug: roleSlug ?? null,
      tokenHash: sha256Hex(token),
      tokenSealed: seal(scope.deps.tokens.masterKey, id, Buffer.from(token, 'utf8')),
      expiresAt: new Date(now.getTime() + (input.expires_in_days ?? DEFAULT_EXPIRES_IN_DAYS) * DAY_MS),
      createdAt: now,
      updatedAt: now,
    });
    await recordEvent(tx, scope, 'invitation.created', toInvitationEvent(row, now));
    return { row, organizationName, inviterEmail: inviter?.email ?? null };
  });
}

/** Sends the invitation e-mail when a mailer is configured; a failure is logged and answered, never thrown. */
async function mailInvitation(
  scope: Scope,
  invitation: Invitation,
  organizationName: string | null,
  inviterEmail: string | null,
): Promise<MailOutcome> {
  const mailer = scope.deps.mailer;
  if (!mailer) return 'none';
  const message = invitationMessage({
    email: invitation.email,
    acceptUrl: invitation.accept_invitation_url,
    expiresAt: new Date(invitation.expires_at),
    organizationName,
    inviterEmail,
  });
  try {
    await mailer.send(message);
    return 'sent';
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    scope.deps.log.warn({ invitation_id: invitation.id, reason }, 'the invitation e-mail could not be sent');
    return error instanceof MailRecipientRefused ? 'refused' : 'failed';
  }
}

/**
 * Accepts a pending invitation in one transaction: the user with its e-mail (created, verified,
 * when there is none), their membership of the invitation's organization with the invited role
 * (an existing membership is kept as it is), and the invitation marked accepted. The invitation
 * is held FOR UPDATE, so concurrent accepts run one after the other and all but the first find
 * it accepted (400).
 */
export async function acceptInvitation(scope: Scope, id: string): Promise<Invitation> {
  const row = await scope.db.transaction(async (tx) => {
    const now = scope.now();
    const current = await findInvitation(tx, scope.env.id, id, 'update');
    assertPending(current, now);
    const userId =
      (await userIdByEmail(tx, scope.env.id, current.email)) ?? (await createInvitedUser(tx, scope, current));
    if (current.organizationId && !(await membershipStatus(tx, scope.env.id, current.organizationId, userId))) {
      await addMembership(tx, scope, {
        userId,
        organizationId: current.organizationId,
        roleSlug: current.roleSlug ?? undefined,
      });
    }
    const accepted = await updateInvitationRow(tx, current.id, {
      state: 'accepted',
      acceptedAt: now,
      acceptedUserId: userId,
      updatedAt: now,
    });
    await recordEvent(tx, scope, 'invitation.accepted', toInvitationEvent(accepted, now));
    return accepted;
  });
  return toInvitation(scope, row);
}

/**
 * The invitee's user, made on acceptance (the accepted token proves the e-mail address), or the
 * one a concurrent accept of another invitation for the same address has just made.
 */
async function createInvitedUser(tx: Db, scope: Scope, invitation: InvitationRow): Promise<string> {
  const now = scope.now();
  const row = await insertUserUnlessTaken(tx, {
    id: newId('user'),
    environmentId: scope.env.id,
    email: invitation.email,
    emailVerified: true,
    createdAt: now,
    updatedAt: now,
  });
  if (!row) {
    const existing = await userIdByEmail(tx, scope.env.id, invitation.email);
    if (!existing) throw conflict('conflict', 'The request conflicted with a concurrent request; retry it.');
    return existing;
  }
  await recordEvent(tx, scope, 'user.created', toUser(row));
  return row.id;
}

export async function revokeInvitation(scope: Scope, id: string): Promise<Invitation> {
  const row = await scope.db.transaction(async (tx) => {
    const now = scope.now();
    const current = await findInvitation(tx, scope.env.id, id, 'update');
    assertPending(current, now);
    const revoked = await updateInvitationRow(tx, current.id, { state: 'revoked', revokedAt: now, updatedAt: now });
    await recordEvent(tx, scope, 'invitation.revoked', toInvitationEvent(revoked, now));
    return revoked;
  });
  return toInvitation(scope, row);
}

/**
 * Sends the e-mail of a pending invitation again (same token and expiry) and records
 * `invitation.resent`; counted against the invitation's and its organization's daily limits.
 */
export async function resendInvitation(
  scope: Scope,
  input: z.infer<typeof ResendInvitationInput>,
): Promise<MailedInvitation> {
  // Read first, so an unknown or settled invitation is 404 or 400, never counted.
  const before = await findInvitation(scope.db, scope.env.id, input.id);
  assertPending(before, scope.now());
  const limits = [
    resendsOf(scope.env.id, before.organizationId, before.email),
    mailsOf(scope.env.id, before.organizationId),
  ];
  const { row, organizationName, inviterEmail } = await mailCounted(scope, limits, () => markResent(scope, input.id));
  const invitation = toInvitation(scope, row);
  return { invitation, mail: await mailInvitation(scope, invitation, organizationName, inviterEmail) };
}

/** `invitation.resent`, with the invitation held and checked pending again. */
function markResent(scope: Scope, id: string) {
  return scope.db.transaction(async (tx) => {
    const now = scope.now();
    const current = await findInvitation(tx, scope.env.id, id, 'update');
    assertPending(current, now);
    const resent = await updateInvitationRow(tx, current.id, { updatedAt: now });
    await recordEvent(tx, scope, 'invitation.resent', toInvitationEvent(resent, now));
    const organizationName = resent.organizationId
      ? (await requireOrganization(tx, scope, resent.organizationId)).name
      : null;
    const inviterEmail = resent.inviterUserId ? (await findUser(tx, scope.env.id, resent.inviterUserId)).email : null;
    return { row: resent, organizationName, inviterEmail };
  });
}
