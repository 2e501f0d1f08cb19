// Paging: one input per wire style (REST list parameters, the official widgets' query, GraphQL's
// `Page` arguments), each turned into the one pagination's PageParams, and the one envelope.
import type { Page, PageParams } from '@atrium/db';
import { z } from 'zod';
import { invalid, invalidOfZod } from './errors.ts';

/** A cursor is a row's id (common/schemas.ts `Id`): a prefix and an opaque rest. */
const Cursor = z.string().min(1).max(128);

/** REST: the list parameters every list accepts (query strings, so numbers are coerced). */
export const ListParams = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(10),
  order: z.enum(['asc', 'desc', 'normal']).default('desc'),
  after: Cursor.optional(),
  before: Cursor.optional(),
});

export type ListParamsInput = z.infer<typeof ListParams>;

/** `normal` is upstream's alias of the default order. `before` and `after` exclude each other. */
export function pageParams(input: ListParamsInput): PageParams {
  if (input.after !== undefined && input.before !== undefined) {
    throw invalid([{ field: 'before', code: 'before_invalid', message: 'before and after cannot be combined' }]);
  }
  return {
    limit: input.limit,
    order: input.order === 'asc' ? 'asc' : 'desc',
    after: input.after,
    before: input.before,
  };
}

/** The cursors of the pages around a page (null where there is none). */
export const ListMetadata = z.object({ before: z.string().nullable(), after: z.string().nullable() });
export type ListMetadata = z.infer<typeof ListMetadata>;

/** The one envelope: a page's items, each through its resource's `toX`, and its cursors. */
export interface Listed<T> {
  data: T[];
  list_metadata: ListMetadata;
}

export function envelope<Row, Item>(page: Page<Row>, toItem: (row: Row) => Item): Listed<Item> {
  return { data: page.rows.map(toItem), list_metadata: { before: page.before, after: page.after } };
}

/** REST's list envelope: `{object: "list", data, list_metadata}`. */
export function asList<Row, Item>(page: Page<Row>, toItem: (row: Row) => Item) {
  return { object: 'list' as const, ...envelope(page, toItem) };
}

/** REST's list envelope schema. */
export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({ object: z.literal('list'), data: z.array(item), list_metadata: ListMetadata });

/**
 * The official widgets' query (`limit`, `after`, `before`; WIDGETS-API.md section 2.3). The
 * widget's "Next" sends `before` and "Previous" `after`: the cursors swap, going in and coming out.
 */
export const WidgetPageInput = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(10),
  after: Cursor.optional(),
  before: Cursor.optional(),
});

/** The widgets' query as the one pagination's parameters, read upward (the widgets' order). */
export function widgetPageParams(input: z.infer<typeof WidgetPageInput>): ListParamsInput {
  return { limit: input.limit, order: 'asc', after: input.before, before: input.after };
}

/** An envelope as the widgets read it: `list_metadata` with the cursors swapped back. */
export function widgetList<T>(list: Listed<T>): Listed<T> {
  return { data: list.data, list_metadata: { before: list.list_metadata.after, after: list.list_metadata.before } };
}

/**
 * GraphQL's `Page` arguments (`after, before: String, limit: Int, order: PaginationOrder`), also
 * the input of the typed tRPC lists that mirror them (`client.*`). Checked as every list checks
 * them by `pageOfGraphQLArgs`.
 */
export const GraphQLPageArgs = z.object({
  after: z.string().nullish(),
  before: z.string().nullish(),
  limit: z.number().int().nullish(),
  order: z.enum(['Asc', 'Desc', 'Normal']).nullish(),
});
export type GraphQLPageArgs = z.infer<typeof GraphQLPageArgs>;

/**
 * `Page` arguments checked as REST's list parameters (422: limit 1-100, 10 when absent); `Normal`
 * or no order is the list's natural order, `normal` (the users table reads upward).
 */
export function pageOfGraphQLArgs(args: GraphQLPageArgs, normal: 'asc' | 'desc' = 'desc'): ListParamsInput {
  const parsed = ListParams.safeParse({
    after: args.after ?? undefined,
    before: args.before ?? undefined,
    limit: args.limit ?? undefined,
    order: args.order?.toLowerCase() ?? 'normal',
  });
  if (!parsed.success) throw invalidOfZod(parsed.error);
  const { limit, order, after, before } = parsed.data;
  return { limit, order: order === 'normal' ? normal : order, after, before };
}

/** An envelope as GraphQL's lists and the typed tRPC lists answer it: `{data, listMetadata}`. */
export function graphqlList<T>(list: Listed<T>): { data: T[]; listMetadata: ListMetadata } {
  return { data: list.data, listMetadata: list.list_metadata };
}
