import { z } from 'zod';
import { Id, ListParams, listOf, Timestamp } from '../common/schemas.ts';

export const SESSION_STATUSES = ['active', 'expired', 'revoked'] as const;

/**
 * Upstream's session object (the SDK's `SessionResponse`). Atrium's sessions are the ones client
 * tokens are bound to (operation 20): minted by the application's backend for a user it has
 * authenticated itself, hence `auth_method: external_auth`; the IP address and user agent are
 * those of the first client-surface request with one of its tokens (`noteSessionUse`).
 */
export const Session = z
  .object({
    object: z.literal('session'),
    id: z.string(),
    user_id: z.string(),
    organization_id: z.string(),
    ip_address: z.string().nullable(),
    user_agent: z.string().nullable(),
    auth_method: z.literal('external_auth'),
    status: z.enum(SESSION_STATUSES),
    expires_at: Timestamp,
    /** When it was revoked, or when it expired; null while active. */
    ended_at: Timestamp.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Session' });
export type Session = z.infer<typeof Session>;

export const SessionList = listOf(Session);

/** `GET /user_management/users/{id}/sessions`: the user's sessions, newest first by default. */
export const ListSessionsInput = ListParams.extend({ id: Id });

/** `POST /user_management/sessions/revoke`. */
export const RevokeSessionInput = z.object({ session_id: Id });
