import type { ClientSession } from '../sessions/schemas.ts';
import type { ClientBuilder } from './builder.ts';
import { type ClientProcedures, procedures } from './caller.ts';

type Revoked = Awaited<ReturnType<ClientProcedures['sessions']['revoke']>>;

/** The caller's sessions (WIDGETS-API.md §4). */
export function sessionTypes(builder: ClientBuilder) {
  const SessionLocationRef = builder
    .objectRef<NonNullable<ClientSession['currentLocation']>>('SessionLocation')
    .implement({
      fields: (t) => ({ cityName: t.exposeString('cityName'), countryISOCode: t.exposeString('countryISOCode') }),
    });

  const SessionStateRef = builder.objectRef<ClientSession['state']>('SessionState').implement({
    fields: (t) => ({
      tag: t.exposeString('tag'),
      expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
    }),
  });

  const SessionRef = builder.objectRef<ClientSession>('Session').implement({
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
    t.field({ type: [SessionRef], resolve: (_root, _args, ctx) => procedures.sessions.list(ctx) }),
  );

  builder.mutationFields((t) => ({
    revokeSession: t.field({
      type: RevokeSessionResult,
      args: { input: t.arg({ type: RevokeSessionInput, required: true }) },
      resolve: (_root, { input }, ctx) => procedures.sessions.revoke(ctx, { sessionId: String(input.sessionId) }),
    }),
    revokeAllSessions: t.field({
      type: RevokeAllSessionsResult,
      resolve: (_root, _args, ctx) => procedures.sessions.revokeAll(ctx),
    }),
  }));
}
