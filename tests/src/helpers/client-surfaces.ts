import { TRPCClientError } from '@trpc/client';
import { ClientError } from 'graphql-request';
import { type ClientSetup, graphqlRequestFor, trpcFor } from './client.ts';
import type { TestEnvironment } from './world.ts';

/** The three client surfaces for one token: REST (ClientSetup.http), graphql-request, typed tRPC. */
export function surfaces(env: TestEnvironment, a: ClientSetup) {
  return { gql: graphqlRequestFor(env, a.token), trpc: trpcFor(env, a.token) };
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
