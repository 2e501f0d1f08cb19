import { createRequire } from 'node:module';
import { environments } from '@atrium/db';
import {
  type ClientPrincipal,
  clientSchema,
  createCaller,
  createInnerContext,
  type EnvironmentInfo,
} from '@atrium/routers';
import { eq } from 'drizzle-orm';
import type * as GraphQL from 'graphql';
import type { TestEnvironment } from '../helpers/world.ts';

export { graphqlRequestFor, trpcFor } from '../helpers/client.ts';

/** A new operation-20 client token, and so a new session, for a user of an organization. */
export async function anotherToken(env: TestEnvironment, organizationId: string, userId: string): Promise<string> {
  const res = await env.http.post('/client/token', { organization_id: organizationId, user_id: userId });
  if (res.status !== 201) throw new Error(`token: ${res.status} ${res.text}`);
  return res.body.token;
}

/**
 * An admin-portal caller (issue #23: no user) of the organization, which no endpoint mints yet:
 * a tRPC caller and a GraphQL executor with that principal, as the transports would build them.
 */
export async function portalCaller(env: TestEnvironment, organizationId: string) {
  const [environment] = await env.deps.db.select().from(environments).where(eq(environments.id, env.environmentId));
  const info: EnvironmentInfo = {
    id: env.environmentId,
    name: String(environment?.name),
    clientId: env.clientId,
    flags: environment?.flags ?? {},
  };
  const principal: ClientPrincipal = {
    kind: 'portal',
    organizationId,
    userId: null,
    sessionId: 'session_portal',
    permissions: [],
    expiresAt: new Date(Date.now() + 60_000),
  };
  const ctx = { ...createInnerContext(env.deps, undefined), client: { env: info, principal } };
  // The schema's own copy of graphql (CommonJS, as Pothos loads it), not vitest's ESM one.
  const { graphql } = createRequire(import.meta.url)('graphql') as typeof GraphQL;
  return {
    caller: createCaller(ctx),
    graphql: (source: string) => graphql({ schema: clientSchema(), source, contextValue: { call: ctx } }),
  };
}
