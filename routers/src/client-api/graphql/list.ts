import type { PageParams } from '@atrium/db';
import { ListParams, pageParams } from '../../common/schemas.ts';
import { invalidOfZod } from '../../kernel/errors.ts';
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

type PageArgs = {
  after?: string | null;
  before?: string | null;
  limit?: number | null;
  order?: 'Asc' | 'Desc' | 'Normal' | null;
};

/**
 * `Page` arguments checked as every list checks them (422: limit 1–100, 10 when absent); `Normal`
 * or no order is the list's natural order, `normal` (the users table reads upward).
 */
export function listInputOfArgs(args: PageArgs, normal: 'asc' | 'desc' = 'desc') {
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

/** `Page` arguments as the one pagination's parameters. */
export const pageOfArgs = (args: PageArgs): PageParams => pageParams(listInputOfArgs(args));
