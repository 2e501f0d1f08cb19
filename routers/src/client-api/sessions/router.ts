import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { ApiError } from '../../kernel/errors.ts';
import type { ClientScope } from '../../kernel/principals.ts';
import { clientProcedure, router } from '../../trpc.ts';
import { builder } from '../graphql/builder.ts';
import { listOwnSessions, type OwnSession, revokeOtherOwnSessions, revokeOwnSession } from './service.ts';

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

const SessionState = z.object({ tag: z.string(), expiresAt: z.string().nullable() });
const Location = z.object({ cityName: z.string(), countryISOCode: z.string() });

const ActiveSession = z.object({
  id: z.string(),
  userlandUserId: z.string(),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  organizationId: z.string().nullable(),
  state: SessionState,
  currentLocation: Location.nullable(),
  ...Object.fromEntries(AUTH_FLAGS.map((flag) => [flag, z.boolean()])),
  impersonatorUserId: z.string().nullable(),
  impersonatorEmail: z.string().nullable(),
  impersonationReason: z.string().nullable(),
  lastActivityAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** The widgets' ActiveSession (WIDGETS-API.md §2.2): every `used*` flag false (no sign-in method is recorded). */
function toActiveSession({ session, lastActivityAt, location }: OwnSession): z.infer<typeof ActiveSession> {
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
function toClientSession({ session, current, lastActivityAt, location }: OwnSession) {
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
type ClientSession = ReturnType<typeof toClientSession>;

const Success = z.object({ success: z.boolean() });
const widgetTags = ['Widgets'];

/** REST for the UserSessions widget (WIDGETS-API.md §2.1 rows 10-12). */
export const sessionsWidgetProcedures = {
  sessions: clientProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/_widgets/UserProfile/sessions',
        tags: widgetTags,
        summary: "The caller's sessions",
      },
    })
    .input(z.object({}))
    .output(z.object({ data: z.array(ActiveSession) }))
    .query(async ({ ctx }) => ({ data: (await listOwnSessions(ctx.scope)).map(toActiveSession) })),

  revokeSession: clientProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/_widgets/UserProfile/sessions/revoke/{sessionId}',
        tags: widgetTags,
        summary: "Revoke one of the caller's sessions",
      },
    })
    .input(z.object({ sessionId: Id }))
    .output(Success)
    .mutation(async ({ ctx, input }) => {
      await revokeOwnSession(ctx.scope, input.sessionId);
      return { success: true };
    }),

  revokeAllSessions: clientProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/_widgets/UserProfile/sessions/revoke-all',
        tags: widgetTags,
        summary: "Revoke all the caller's sessions but the current one (JSON body on DELETE)",
      },
      bodyOnDelete: true,
    })
    .input(z.object({ currentSessionId: Id }))
    .output(Success)
    .mutation(async ({ ctx, input }) => {
      await revokeOtherOwnSessions(ctx.scope, input.currentSessionId);
      return { success: true };
    }),
};

const ClientSessionSchema = z.object({
  id: z.string(),
  isCurrent: z.boolean(),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  organizationId: z.string().nullable(),
  currentLocation: Location.nullable(),
  lastActivityAt: z.string().nullable(),
  state: SessionState,
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** Revokes and answers GraphQL's RevokeSessionResult: a session not the caller's is SessionNotFound. */
async function revokeResult(scope: ClientScope, sessionId: string) {
  try {
    return {
      __typename: 'SessionRevoked' as const,
      session: toClientSession(await revokeOwnSession(scope, sessionId)),
    };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return { __typename: 'SessionNotFound' as const, sessionId };
    throw error;
  }
}

/** Revokes all but the token's own session (its `sid`): RevokeAllSessionsResult. */
async function revokeAllResult(scope: ClientScope) {
  await revokeOtherOwnSessions(scope, scope.client.sessionId);
  return { __typename: 'AllSessionsRevoked' as const, success: true };
}

/** Typed tRPC (`client.sessions.*`), the same operations and shapes as GraphQL. */
export const sessionsClientProcedures = {
  sessions: router({
    list: clientProcedure
      .output(z.array(ClientSessionSchema))
      .query(async ({ ctx }) => (await listOwnSessions(ctx.scope)).map(toClientSession)),
    revoke: clientProcedure
      .input(z.object({ sessionId: Id }))
      .output(
        z.discriminatedUnion('__typename', [
          z.object({ __typename: z.literal('SessionRevoked'), session: ClientSessionSchema }),
          z.object({ __typename: z.literal('SessionNotFound'), sessionId: z.string() }),
        ]),
      )
      .mutation(({ ctx, input }) => revokeResult(ctx.scope, input.sessionId)),
    revokeAll: clientProcedure
      .output(z.object({ __typename: z.literal('AllSessionsRevoked'), success: z.boolean() }))
      .mutation(({ ctx }) => revokeAllResult(ctx.scope)),
  }),
};

// GraphQL (WIDGETS-API.md §4).
const SessionLocationRef = builder.objectRef<z.infer<typeof Location>>('SessionLocation').implement({
  fields: (t) => ({ cityName: t.exposeString('cityName'), countryISOCode: t.exposeString('countryISOCode') }),
});

const SessionStateRef = builder.objectRef<ClientSession['state']>('SessionState').implement({
  fields: (t) => ({
    tag: t.exposeString('tag'),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
  }),
});

export const SessionRef = builder.objectRef<ClientSession>('Session').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    isCurrent: t.exposeBoolean('isCurrent'),
    ipAddress: t.exposeString('ipAddress', { nullable: true }),
    userAgent: t.exposeString('userAgent', { nullable: true }),
    organizationId: t.exposeString('organizationId', { nullable: true }),
    currentLocation: t.expose('currentLocation', { type: SessionLocationRef, nullable: true }),
    lastActivityAt: t.expose('lastActivityAt', { type: 'DateTime', nullable: true }),
    state: t.expose('state', { type: SessionStateRef }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

type Revoked = Awaited<ReturnType<typeof revokeResult>>;
const SessionRevokedRef = builder
  .objectRef<Extract<Revoked, { __typename: 'SessionRevoked' }>>('SessionRevoked')
  .implement({ fields: (t) => ({ session: t.expose('session', { type: SessionRef }) }) });
const SessionNotFoundRef = builder
  .objectRef<Extract<Revoked, { __typename: 'SessionNotFound' }>>('SessionNotFound')
  .implement({ fields: (t) => ({ sessionId: t.exposeID('sessionId') }) });
const RevokeSessionResult = builder.unionType('RevokeSessionResult', {
  types: [SessionRevokedRef, SessionNotFoundRef],
  resolveType: (value) => value.__typename,
});

const AllSessionsRevokedRef = builder
  .objectRef<{ __typename: 'AllSessionsRevoked'; success: boolean }>('AllSessionsRevoked')
  .implement({ fields: (t) => ({ success: t.exposeBoolean('success') }) });
const RevokeAllSessionsResult = builder.unionType('RevokeAllSessionsResult', {
  types: [AllSessionsRevokedRef],
  resolveType: () => 'AllSessionsRevoked',
});

const RevokeSessionInput = builder.inputType('RevokeSessionInput', {
  fields: (t) => ({ sessionId: t.id({ required: true }) }),
});

builder.queryField('sessions', (t) =>
  t.field({
    type: [SessionRef],
    resolve: async (_root, _args, ctx) => (await listOwnSessions(ctx.scope)).map(toClientSession),
  }),
);

builder.mutationField('revokeSession', (t) =>
  t.field({
    type: RevokeSessionResult,
    args: { input: t.arg({ type: RevokeSessionInput, required: true }) },
    resolve: (_root, { input }, ctx) => revokeResult(ctx.scope, String(input.sessionId)),
  }),
);

builder.mutationField('revokeAllSessions', (t) =>
  t.field({ type: RevokeAllSessionsResult, resolve: (_root, _args, ctx) => revokeAllResult(ctx.scope) }),
);
