import { z } from 'zod';
import { Id } from '../../common/schemas.ts';
import type { Organization } from '../../organizations/schemas.ts';
import { clientProcedure } from '../../trpc.ts';
import { builder } from '../graphql/builder.ts';
import { authenticationSettings, clientSettings, getOwnOrganization } from './service.ts';

/** The widgets' SettingsResponse (WIDGETS-API.md §2.2); Atrium stores no logos. */
const SettingsResponse = z.object({
  object: z.literal('settings'),
  authkitOrigin: z.string(),
  teamName: z.string(),
  logoDarkIconPath: z.string().nullable(),
  logoDarkPath: z.string().nullable(),
  logoLightIconPath: z.string().nullable(),
  logoLightPath: z.string().nullable(),
});

const NO_LOGOS = { logoDarkIconPath: null, logoDarkPath: null, logoLightIconPath: null, logoLightPath: null };

/** REST for the widgets (WIDGETS-API.md §2.1 row 20). */
export const organizationWidgetProcedures = {
  settings: clientProcedure
    .meta({
      openapi: { method: 'GET', path: '/_widgets/settings', tags: ['Widgets'], summary: "The deployment's settings" },
    })
    .input(z.object({}))
    .output(SettingsResponse)
    .query(({ ctx }) => Object.assign({ object: 'settings' as const }, clientSettings(ctx.scope), NO_LOGOS)),
};

/** GraphQL's Organization (WIDGETS-API.md §4). */
const ClientOrganization = z.object({
  id: z.string(),
  name: z.string(),
  allowProfilesOutsideOrganization: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const toClientOrganization = (o: Organization): z.infer<typeof ClientOrganization> => ({
  id: o.id,
  name: o.name,
  allowProfilesOutsideOrganization: o.allow_profiles_outside_organization,
  createdAt: o.created_at,
  updatedAt: o.updated_at,
});

/** Typed tRPC (`client.organization`), as GraphQL's `organization(id)`. */
export const organizationClientProcedures = {
  organization: clientProcedure
    .input(z.object({ id: Id }))
    .output(ClientOrganization)
    .query(async ({ ctx, input }) => toClientOrganization(await getOwnOrganization(ctx.scope, input.id))),
};

// GraphQL (WIDGETS-API.md §4).
const OrganizationRef = builder.objectRef<z.infer<typeof ClientOrganization>>('Organization').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    allowProfilesOutsideOrganization: t.exposeBoolean('allowProfilesOutsideOrganization'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const BrandingRef = builder.objectRef<{ displayName: string }>('Branding').implement({
  fields: (t) => ({
    displayName: t.exposeString('displayName'),
    logoDarkIconPath: t.string({ nullable: true, resolve: () => null }),
    logoDarkPath: t.string({ nullable: true, resolve: () => null }),
    logoLightIconPath: t.string({ nullable: true, resolve: () => null }),
    logoLightPath: t.string({ nullable: true, resolve: () => null }),
  }),
});

const AuthKitSettingsRef = builder.objectRef<{ origin: string }>('AuthKitSettings').implement({
  fields: (t) => ({ origin: t.exposeString('origin') }),
});

type AuthenticationSettings = ReturnType<typeof authenticationSettings>;
const PasswordPolicyRef = builder.objectRef<AuthenticationSettings['passwordPolicy']>('PasswordPolicy').implement({
  description: "Atrium's password rule: a length between minLength and maxLength.",
  fields: (t) => ({ minLength: t.exposeInt('minLength'), maxLength: t.exposeInt('maxLength') }),
});

const AuthenticationSettingsRef = builder.objectRef<AuthenticationSettings>('AuthenticationSettings').implement({
  fields: (t) => ({
    mfaEnabled: t.exposeBoolean('mfaEnabled'),
    mfaRequired: t.exposeBoolean('mfaRequired'),
    passkeyAuthEnabled: t.exposeBoolean('passkeyAuthEnabled'),
    passwordAuthEnabled: t.exposeBoolean('passwordAuthEnabled'),
    passwordPolicy: t.expose('passwordPolicy', { type: PasswordPolicyRef }),
  }),
});

builder.queryField('organization', (t) =>
  t.field({
    type: OrganizationRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => toClientOrganization(await getOwnOrganization(ctx.scope, String(id))),
  }),
);

builder.queryField('branding', (t) =>
  t.field({ type: BrandingRef, resolve: (_root, _args, ctx) => ({ displayName: clientSettings(ctx.scope).teamName }) }),
);

builder.queryField('authkitSettings', (t) =>
  t.field({
    type: AuthKitSettingsRef,
    resolve: (_root, _args, ctx) => ({ origin: clientSettings(ctx.scope).authkitOrigin }),
  }),
);

builder.queryField('authenticationSettings', (t) =>
  t.field({ type: AuthenticationSettingsRef, resolve: (_root, _args, ctx) => authenticationSettings(ctx.scope) }),
);
