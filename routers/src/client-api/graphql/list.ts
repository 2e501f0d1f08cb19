import type { PageParams } from '@atrium/db';
import { ListParams, pageParams } from '../../common/schemas.ts';
import { invalidOfZod } from '../../errors.ts';
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
