import type { ClientOrganization } from '../organization/schemas.ts';
import type { authenticationSettings } from '../organization/service.ts';
import type { ClientBuilder } from './builder.ts';
import { procedures } from './caller.ts';

/** The caller's organizations, its own organization, and the deployment's settings (WIDGETS-API.md §4). */
export function organizationTypes(builder: ClientBuilder) {
  /** The status of the client API (the one operation the widgets' generated SDK declares). */
  builder.queryField('clientApiStatus', (t) => t.string({ resolve: (_root, _args, ctx) => procedures.status(ctx) }));

  const UserOrganization = builder
    .objectRef<{ id: string; name: string; isCurrent: boolean }>('UserOrganization')
    .implement({
      fields: (t) => ({
        id: t.exposeID('id'),
        name: t.exposeString('name'),
        isCurrent: t.exposeBoolean('isCurrent'),
      }),
    });

  const OrganizationRef = builder.objectRef<ClientOrganization>('Organization').implement({
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

  builder.queryFields((t) => ({
    organizations: t.field({
      type: [UserOrganization],
      resolve: (_root, _args, ctx) => procedures.organizations(ctx),
    }),
    organization: t.field({
      type: OrganizationRef,
      args: { id: t.arg.id({ required: true }) },
      resolve: (_root, { id }, ctx) => procedures.organization(ctx, { id: String(id) }),
    }),
    branding: t.field({ type: BrandingRef, resolve: (_root, _args, ctx) => procedures.branding(ctx) }),
    authkitSettings: t.field({
      type: AuthKitSettingsRef,
      resolve: (_root, _args, ctx) => procedures.authkitSettings(ctx),
    }),
    authenticationSettings: t.field({
      type: AuthenticationSettingsRef,
      resolve: (_root, _args, ctx) => procedures.authenticationSettings(ctx),
    }),
  }));
}
