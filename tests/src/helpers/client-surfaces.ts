import type { AppRouter } from '@atrium/routers';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { ClientError, GraphQLClient } from 'graphql-request';
import { type ClientSetup, WIDGET_HEADERS } from './client.ts';
import type { TestEnvironment } from './world.ts';

/** The three client surfaces for one token: REST (ClientSetup.http), graphql-request, typed tRPC. */
export function surfaces(env: TestEnvironment, a: ClientSetup) {
  const headers = { Authorization: `Bearer ${a.token}`, ...WIDGET_HEADERS };
  const gql = new GraphQLClient(`${env.world.url}/client/graphql`, { headers });
  const trpc = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${env.world.url}/trpc`, headers })] });
  return { gql, trpc };
}

/** The error a GraphQL operation failed with: its message and extensions. */
export async function gqlError(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ClientError)) throw new Error(`expected a GraphQL error, got ${String(error)}`);
  return error.response.errors?.[0] as unknown as { message: string; extensions: { code: string; status: number } };
}

/** The HTTP status a typed tRPC call failed with. */
export async function trpcStatus(promise: Promise<unknown>): Promise<number | undefined> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof TRPCClientError)) throw new Error(`expected a tRPC error, got ${String(error)}`);
  return (error.data as { httpStatus?: number } | undefined)?.httpStatus;
}
