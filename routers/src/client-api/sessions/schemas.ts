import { z } from 'zod';
import type { OwnSession } from './service.ts';

/** The ways in a session may have been made; Atrium's sessions are minted by the application's backend. */
const AUTH_FLAGS = [
  'usedSsoAuth',
  'usedPasswordAuth',
  'usedPasskeyAuth',
  'usedAppleOauth',
  'usedBitbucketOauth',
  'usedGithubOauth',
  'usedGitLabOauth',
  'usedGoogleOauth',
  'usedLinkedInOauth',
  'usedImpersonation',
  'usedMicrosoftOauth',
  'usedSlackOauth',
  'usedXeroOauth',
  'usedMagicAuth',
] as const;

/** A live session's `state.tag` (upstream's tags: `Issued`, `Revoked`, …). */
const stateTag = (status: string) => (status === 'active' ? 'Issued' : status === 'revoked' ? 'Revoked' : 'Expired');

export const SessionState = z.object({ tag: z.string(), expiresAt: z.string().nullable() });
export const SessionLocation = z.object({ cityName: z.string(), countryISOCode: z.string() });

/** The widgets' ActiveSession (WIDGETS-API.md §2.2). */
export const ActiveSession = z.object({
  id: z.string(),
  userlandUserId: z.string(),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  organizationId: z.string().nullable(),
  state: SessionState,
  currentLocation: SessionLocation.nullable(),
  ...Object.fromEntries(AUTH_FLAGS.map((flag) => [flag, z.boolean()])),
  impersonatorUserId: z.string().nullable(),
  impersonatorEmail: z.string().nullable(),
  impersonationReason: z.string().nullable(),
  lastActivityAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** Every `used*` flag false: no sign-in method is recorded. */
export function toActiveSession({ session, lastActivityAt, location }: OwnSession): z.infer<typeof ActiveSession> {
  return {
    id: session.id,
    userlandUserId: session.user_id,
    ipAddress: session.ip_address,
    userAgent: session.user_agent,
    organizationId: session.organization_id,
    state: { tag: stateTag(session.status), expiresAt: session.expires_at },
    currentLocation: location,
    ...Object.fromEntries(AUTH_FLAGS.map((flag) => [flag, false])),
    impersonatorUserId: null,
    impersonatorEmail: null,
    impersonationReason: null,
    lastActivityAt,
    createdAt: session.created_at,
    updatedAt: session.updated_at,
  };
}

/** The GraphQL / typed tRPC Session (WIDGETS-API.md §4). */
export const ClientSession = z.object({
  id: z.string(),
  isCurrent: z.boolean(),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  organizationId: z.string().nullable(),
  currentLocation: SessionLocation.nullable(),
  lastActivityAt: z.string().nullable(),
  state: SessionState,
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ClientSession = z.infer<typeof ClientSession>;

export function toClientSession({ session, current, lastActivityAt, location }: OwnSession): ClientSession {
  return {
    id: session.id,
    isCurrent: current,
    ipAddress: session.ip_address,
    userAgent: session.user_agent,
    organizationId: session.organization_id,
    currentLocation: location,
    lastActivityAt,
    state: { tag: stateTag(session.status), expiresAt: session.expires_at as string | null },
    createdAt: session.created_at,
    updatedAt: session.updated_at,
  };
}
