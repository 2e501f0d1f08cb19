import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import { clientProcedure, router } from '../../trpc.ts';
import { builder } from '../graphql/builder.ts';
import {
  type ClientConnection,
  CONNECTION_STATES,
  createSsoConnection,
  deleteSsoConnection,
  getSsoConnection,
  listSsoConnections,
  SSO_TYPE_NAMES,
  toWidgetConnection,
  updateSsoConnection,
} from './service.ts';

const X509 = z.object({ id: z.string(), value: z.string() });
const WidgetConnectionBase = {
  id: z.string(),
  name: z.string(),
  createdAt: z.string(),
  state: z.enum(CONNECTION_STATES),
  lastSession: z.null(),
};

/** §2.2 SsoConnection, keyed by `providerTag`, `type` only from the widget's lists. */
const WidgetConnection = z.discriminatedUnion('providerTag', [
  z.object({
    ...WidgetConnectionBase,
    providerTag: z.literal('Saml'),
    type: z.string(),
    x509Certificates: z.array(X509),
    latestExpiringCertificate: X509.nullable(),
    latestExpiredCertificate: X509.nullable(),
  }),
  z.object({ ...WidgetConnectionBase, providerTag: z.literal('OpenIdConnect'), type: z.string() }),
]);

/** REST for the SSO connection widget (WIDGETS-API.md §2, row 18): a bare array. */
export const ssoWidgetProcedures = {
  ssoConnections: clientProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/_widgets/admin-portal/sso-connections',
        tags: ['Widgets'],
        summary: "The organization's SSO connections (AdminPortalSsoConnection)",
      },
    })
    .input(z.object({}))
    .output(z.array(WidgetConnection))
    .query(async ({ ctx }) => (await listSsoConnections(ctx.scope)).map(toWidgetConnection)),
};

const ClientConnectionOut = z.object({
  id: z.string(),
  name: z.string(),
  organizationId: z.string(),
  type: z.enum(SSO_TYPE_NAMES as [string, ...string[]]),
  state: z.enum(['Active', 'Inactive']),
  setupComplete: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const ConnectionId = z.object({ id: Id });

/** Typed tRPC for frontends (`client.sso.*`), the operations and shapes of GraphQL. */
export const ssoClientProcedures = {
  sso: router({
    list: clientProcedure.output(z.array(ClientConnectionOut)).query(({ ctx }) => listSsoConnections(ctx.scope)),
    get: clientProcedure
      .input(ConnectionId)
      .output(ClientConnectionOut)
      .query(({ ctx, input }) => getSsoConnection(ctx.scope, input.id)),
    create: clientProcedure
      .input(z.object({ type: z.string().min(1).max(64), name: z.string().nullish() }))
      .output(ClientConnectionOut)
      .mutation(({ ctx, input }) => createSsoConnection(ctx.scope, input)),
    update: clientProcedure
      .input(z.object({ id: Id, name: z.string().nullish() }))
      .output(ClientConnectionOut)
      .mutation(({ ctx, input }) => updateSsoConnection(ctx.scope, input)),
    delete: clientProcedure
      .input(ConnectionId)
      .output(z.object({ id: z.string() }))
      .mutation(async ({ ctx, input }) => ({ id: await deleteSsoConnection(ctx.scope, input.id) })),
  }),
};

// GraphQL (WIDGETS-API.md §4): ConnectionType lists every type §4 spells; Atrium stores the SSO ones.
/** The OAuth providers §4 spells: the OAuth members of `ConnectionType`, and the `OAuthProvider` enum. */
export const OAUTH_PROVIDERS = [
  'AppleOAuth',
  'BitbucketOAuth',
  'DiscordOAuth',
  'GitLabOAuth',
  'GithubOAuth',
  'GoogleOAuth',
  'GrokOAuth',
  'IntuitOAuth',
  'LinkedInOAuth',
  'MicrosoftOAuth',
  'SalesforceOAuth',
  'SlackOAuth',
  'VercelMarketplaceOAuth',
  'VercelOAuth',
  'XOAuth',
  'XeroOAuth',
] as const;
const OTHER_TYPES = ['MagicLink', 'TestIdp', 'Auth0Migration', 'Auth0SAML', 'GoogleOIDC'];
const ConnectionTypeEnum = builder.enumType('ConnectionType', {
  values: [...new Set([...OAUTH_PROVIDERS, ...OTHER_TYPES, ...SSO_TYPE_NAMES])].sort(),
});
const ConnectionStateEnum = builder.enumType('ConnectionState', { values: CONNECTION_STATES });

const ConnectionRef = builder.objectRef<ClientConnection>('Connection').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    organizationId: t.exposeString('organizationId', { nullable: true }),
    type: t.field({ type: ConnectionTypeEnum, resolve: (c) => c.type }),
    state: t.field({ type: ConnectionStateEnum, resolve: (c) => c.state }),
    setupComplete: t.exposeBoolean('setupComplete'),
    createdAt: t.field({ type: 'DateTime', resolve: (c) => c.createdAt }),
    updatedAt: t.field({ type: 'DateTime', resolve: (c) => c.updatedAt }),
  }),
});

const CreateSsoConnectionInput = builder.inputType('CreateSsoConnectionInput', {
  fields: (t) => ({ type: t.field({ type: ConnectionTypeEnum, required: true }), name: t.string() }),
});
const UpdateSsoConnectionInput = builder.inputType('UpdateSsoConnectionInput', {
  fields: (t) => ({ id: t.id({ required: true }), name: t.string() }),
});

builder.queryFields((t) => ({
  ssoConnections: t.field({ type: [ConnectionRef], resolve: (_root, _args, ctx) => listSsoConnections(ctx.scope) }),
  ssoConnection: t.field({
    type: ConnectionRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => getSsoConnection(ctx.scope, String(args.id)),
  }),
}));

builder.mutationFields((t) => ({
  createSsoConnection: t.field({
    type: ConnectionRef,
    args: { input: t.arg({ type: CreateSsoConnectionInput, required: true }) },
    resolve: (_root, { input }, ctx) => createSsoConnection(ctx.scope, { type: String(input.type), name: input.name }),
  }),
  updateSsoConnection: t.field({
    type: ConnectionRef,
    args: { input: t.arg({ type: UpdateSsoConnectionInput, required: true }) },
    resolve: (_root, { input }, ctx) => updateSsoConnection(ctx.scope, { id: String(input.id), name: input.name }),
  }),
  deleteSsoConnection: t.field({
    type: 'ID',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => deleteSsoConnection(ctx.scope, String(args.id)),
  }),
}));
