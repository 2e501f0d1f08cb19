import type { ListMetadata } from '../../kernel/paging.ts';
import type { ClientBuilder } from './builder.ts';

/**
 * The types every paginated list of the client schema shares (WIDGETS-API.md §4 `Page`,
 * `ListMetadata`), and the `Page` arguments: `after, before: String, limit: Int, order:
 * PaginationOrder` (kernel/paging.ts `GraphQLPageArgs`, checked by the procedures).
 */
export function pagingTypes(builder: ClientBuilder) {
  const PaginationOrder = builder.enumType('PaginationOrder', { values: ['Asc', 'Desc', 'Normal'] as const });
  const ListMetadataRef = builder.objectRef<ListMetadata>('ListMetadata').implement({
    fields: (t) => ({
      after: t.exposeString('after', { nullable: true }),
      before: t.exposeString('before', { nullable: true }),
    }),
  });
  const pageArgs = (t: PothosArgs) => ({
    after: t.arg.string(),
    before: t.arg.string(),
    limit: t.arg.int(),
    order: t.arg({ type: PaginationOrder }),
  });
  return { ListMetadataRef, pageArgs };
}
type PothosArgs = Parameters<Parameters<ClientBuilder['queryField']>[1]>[0];
export type PagingTypes = ReturnType<typeof pagingTypes>;
