import type { GraphQLSchema } from 'graphql';
import { builder } from './builder.ts';
// Each area's types and fields register themselves on the builder when imported here.
import '../organizations/router.ts';
// Admin portal (issue #23): createAdminPortalLink.
import '../admin-portal/router.ts';
// h22/members: the users table (members, invitations, roles, permissions).
import '../members/graphql.ts';
// h22/self
import '../sessions/router.ts';
import '../profile/router.ts';
import '../account/router.ts';
import '../organization/router.ts';
// h22/domains
import '../domains/router.ts';
import '../sso/router.ts';

let built: GraphQLSchema | undefined;

/** The client GraphQL schema, built once per process. */
export function clientSchema(): GraphQLSchema {
  built ??= builder.toSchema({ sortSchema: true });
  return built;
}
