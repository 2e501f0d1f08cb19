import { type ClientConnection, CONNECTION_STATES, SSO_TYPE_NAMES } from '../sso/service.ts';
import type { ClientBuilder } from './builder.ts';
import { procedures } from './caller.ts';

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

/** The organization's SSO connections (WIDGETS-API.md §4): ConnectionType lists every type §4 spells; Atrium stores the SSO ones. */
export function ssoTypes(builder: ClientBuilder) {
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
    ssoConnections: t.field({
      type: [ConnectionRef],
      resolve: (_root, _args, ctx) => procedures.sso.list(ctx),
    }),
    ssoConnection: t.field({
      type: ConnectionRef,
      args: { id: t.arg.id({ required: true }) },
      resolve: (_root, args, ctx) => procedures.sso.get(ctx, { id: String(args.id) }),
    }),
  }));

  builder.mutationFields((t) => ({
    createSsoConnection: t.field({
      type: ConnectionRef,
      args: { input: t.arg({ type: CreateSsoConnectionInput, required: true }) },
      resolve: (_root, { input }, ctx) => procedures.sso.create(ctx, { type: String(input.type), name: input.name }),
    }),
    updateSsoConnection: t.field({
      type: ConnectionRef,
      args: { input: t.arg({ type: UpdateSsoConnectionInput, required: true }) },
      resolve: (_root, { input }, ctx) => procedures.sso.update(ctx, { id: String(input.id), name: input.name }),
    }),
    deleteSsoConnection: t.field({
      type: 'ID',
      args: { id: t.arg.id({ required: true }) },
      resolve: async (_root, args, ctx) => (await procedures.sso.delete(ctx, { id: String(args.id) })).id,
    }),
  }));
}
