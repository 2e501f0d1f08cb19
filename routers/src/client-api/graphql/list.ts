import type { PageParams } from '@atrium/db';
import { ListParams, pageParams } from '../../common/schemas.ts';
import { invalidOfZod, toApiError } from '../../errors.ts';
import { builder } from './builder.ts';

/** Shared by every paginated list of the client schema (WIDGETS-API.md §4 `Page`, `ListMetadata`). */
export const PaginationOrder = builder.enumType('PaginationOrder', { values: ['Asc', 'Desc', 'Normal'] as const });

export const ListMetadataRef = builder
  .objectRef<{ before: string | null; after: string | null }>('ListMetadata')
  .implement({
    fields: (t) => ({
      after: t.exposeString('after', { nullable: true }),
      before: t.exposeString('before', { nullable: true }),
    }),
  });

/** The `Page` arguments: `after, before: String, limit: Int, order: PaginationOrder`. */
export const pageArgs = (t: PothosArgs) => ({
  after: t.arg.string(),
  before: t.arg.string(),
  limit: t.arg.int(),
  order: t.arg({ type: PaginationOrder }),
});
type PothosArgs = Parameters<Parameters<typeof builder.queryField>[1]>[0];

/** `Page` arguments as the one pagination's parameters, checked as every list checks them (422). */
export function pageOfArgs(args: {
  after?: string | null;
  before?: string | null;
  limit?: number | null;
  order?: 'Asc' | 'Desc' | 'Normal' | null;
}): PageParams {
  const parsed = ListParams.safeParse({
    after: args.after ?? undefined,
    before: args.before ?? undefined,
    limit: args.limit ?? undefined,
    order: args.order?.toLowerCase(),
  });
  if (!parsed.success) throw invalidOfZod(parsed.error);
  return pageParams(parsed.data);
}

const GRAPHQL_CODES: Record<number, string> = {
  400: 'BAD_USER_INPUT',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  422: 'BAD_USER_INPUT',
  429: 'RATE_LIMITED',
};

/**
 * What /client/graphql shows of a resolver's error: a service's ApiError keeps its message, with
 * `extensions: {code, status, apiCode}` (403 = FORBIDDEN, on which the widgets fetch a new
 * token); undefined for anything else (the transport masks it). The error arrives wrapped in a
 * GraphQLError, read by shape: yoga and the routers may load different copies of graphql.
 */
export function clientErrorOf(
  error: unknown,
): { message: string; extensions: { code: string; status: number; apiCode: string } } | undefined {
  const wrapped = (error as { originalError?: unknown } | null)?.originalError;
  const api = toApiError(wrapped ?? error);
  if (!api) return undefined;
  const code = GRAPHQL_CODES[api.status] ?? 'INTERNAL_SERVER_ERROR';
  return { message: api.message, extensions: { code, status: api.status, apiCode: api.apiCode } };
}
