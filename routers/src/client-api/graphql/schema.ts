import type { GraphQLSchema } from 'graphql';
import { accountTypes } from './account.ts';
import { adminPortalTypes } from './admin-portal.ts';
import { newBuilder } from './builder.ts';
import { domainTypes } from './domains.ts';
import { memberTypes } from './members.ts';
import { organizationTypes } from './organizations.ts';
import { pagingTypes } from './paging.ts';
import { profileTypes } from './profile.ts';
import { sessionTypes } from './sessions.ts';
import { ssoTypes } from './sso.ts';

/** Every area's types and fields, on one builder (the areas that share types get them handed over). */
function buildClientSchema(): GraphQLSchema {
  const builder = newBuilder();
  const paging = pagingTypes(builder);
  organizationTypes(builder);
  const profile = profileTypes(builder);
  accountTypes(builder, profile);
  sessionTypes(builder);
  memberTypes(builder, paging);
  domainTypes(builder, paging);
  ssoTypes(builder);
  adminPortalTypes(builder);
  return builder.toSchema({ sortSchema: true });
}

let built: GraphQLSchema | undefined;

/** The client GraphQL schema, built once per process. */
export function clientSchema(): GraphQLSchema {
  built ??= buildClientSchema();
  return built;
}
