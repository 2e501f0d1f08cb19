import type { AppRouter } from '@atrium/routers';
import { createTRPCClient, httpLink } from '@trpc/client';
import { GraphQLClient } from 'graphql-request';
import { decodeJwt } from 'jose';
import { uniqueEmail } from './people.ts';
import { HttpClient, type TestEnvironment } from './world.ts';

/** Every scope the official widgets know (routers/src/kernel/principals.ts WIDGET_SCOPES). */
export const ALL_WIDGET_SCOPES = [
  'widgets:users-table:manage',
  'widgets:domain-verification:manage',
  'widgets:sso:manage',
  'widgets:dsync:manage',
];

export interface ClientSetup {
  organizationId: string;
  userId: string;
  email: string;
  /** The widget (or client) token and its claims. */
  token: string;
  claims: ReturnType<typeof decodeJwt>;
  /** HTTP with `Authorization: Bearer <token>` and the headers the widgets send. */
  http: HttpClient;
  /** POST /client/graphql with the token; the parsed response and its status. */
  graphql: (query: string, variables?: Record<string, unknown>) => Promise<{ status: number; body: any }>;
}

/** The headers the official widgets send on every request (WIDGETS-API.md §1.3). */
export const WIDGET_HEADERS = { 'WorkOS-Widgets-Version': '1', 'Content-Type': 'application/json' };

/** A bearer-token client on the worker's server, as the widgets call it. */
export function clientFor(env: TestEnvironment, token: string): Pick<ClientSetup, 'http' | 'graphql'> {
  const http = new HttpClient(env.world.url, { Authorization: `Bearer ${token}`, ...WIDGET_HEADERS });
  const graphql = async (query: string, variables?: Record<string, unknown>) => {
    const res = await http.post('/client/graphql', variables ? { query, variables } : { query });
    return { status: res.status, body: res.body };
  };
  return { http, graphql };
}

/** An environment role holding the three widget permissions, and no admin: what a widget token's scopes need. */
export const WIDGET_ROLE = 'widget-manager';

/** Makes WIDGET_ROLE in the environment, once. */
async function ensureWidgetRole(env: TestEnvironment): Promise<void> {
  const made = await env.http.post('/authorization/roles', { slug: WIDGET_ROLE, name: 'Widget manager' });
  if (made.status === 409) return;
  if (made.status !== 201) throw new Error(`role: ${made.status} ${made.text}`);
  const set = await env.http.put(`/authorization/roles/${WIDGET_ROLE}/permissions`, { permissions: ALL_WIDGET_SCOPES });
  if (set.status !== 200) throw new Error(`role permissions: ${set.status} ${set.text}`);
}

/**
 * An organization, a user with an active membership of it (role `roleSlug`; default, for a widget
 * token asking for any scope, WIDGET_ROLE, whose permissions are the widgets' scopes, else the
 * environment's default role), and a token for them: a widget token with `scopes` (default all
 * three the widgets check; it carries those the role grants), or with `kind: 'client'` an
 * operation-20 client token (a session).
 */
export async function clientSetup(
  env: TestEnvironment,
  options: { scopes?: string[]; kind?: 'widgets' | 'client'; roleSlug?: string; organizationId?: string } = {},
): Promise<ClientSetup> {
  const organizationId =
    options.organizationId ?? (await env.http.post('/organizations', { name: `Org ${uniqueEmail('o')}` })).body.id;
  const email = uniqueEmail('member');
  const user = await env.http.post('/user_management/users', { email, first_name: 'Ada', last_name: 'Lovelace' });
  const scopes = options.scopes ?? ALL_WIDGET_SCOPES;
  const widgetRole = options.roleSlug === undefined && options.kind !== 'client' && scopes.length > 0;
  if (widgetRole) await ensureWidgetRole(env);
  const roleSlug = options.roleSlug ?? (widgetRole ? WIDGET_ROLE : undefined);
  const membership = await env.http.post('/user_management/organization_memberships', {
    user_id: user.body.id,
    organization_id: organizationId,
    ...(roleSlug ? { role_slug: roleSlug } : {}),
  });
  if (membership.status !== 201) throw new Error(`membership: ${membership.status} ${membership.text}`);
  const issued =
    options.kind === 'client'
      ? await env.http.post('/client/token', { organization_id: organizationId, user_id: user.body.id })
      : await env.http.post('/widgets/token', {
          organization_id: organizationId,
          user_id: user.body.id,
          scopes,
        });
  if (issued.status !== 201) throw new Error(`token: ${issued.status} ${issued.text}`);
  const token: string = issued.body.token;
  return {
    organizationId,
    userId: user.body.id,
    email,
    token,
    claims: decodeJwt(token),
    ...clientFor(env, token),
  };
}

/** Typed tRPC over /trpc with a client token, as a TypeScript frontend calls it. */
export function trpcFor(env: TestEnvironment, token: string) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({ url: `${env.world.url}/trpc`, headers: { Authorization: `Bearer ${token}`, ...WIDGET_HEADERS } }),
    ],
  });
}

/** graphql-request (the widgets' own GraphQL transport) against /client/graphql with a token. */
export function graphqlRequestFor(env: TestEnvironment, token: string): GraphQLClient {
  return new GraphQLClient(`${env.world.url}/client/graphql`, {
    headers: { Authorization: `Bearer ${token}`, ...WIDGET_HEADERS },
  });
}
