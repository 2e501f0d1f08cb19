import { and, asc, desc, gt, lt, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

export type ListOrder = 'asc' | 'desc';

export interface PageParams {
  limit: number;
  order: ListOrder;
  after?: string | undefined;
  before?: string | undefined;
}

export interface ListMetadata {
  before: string | null;
  after: string | null;
}

export interface Page<T> {
  data: T[];
  list_metadata: ListMetadata;
}

/** What a list hands to its query: the keyset condition, the order and how many rows to fetch. */
export interface PageQuery {
  /** The keyset condition on the cursor column (undefined on a first page). */
  keyset: SQL | undefined;
  orderBy: SQL;
  limit: number;
}

/**
 * The one pagination mechanism of the service: keyset on an id column (ids sort in creation
 * order), `limit + 1` rows to learn whether more follow, and a cheap probe in the other
 * direction so that `list_metadata` is exact even when the cursor's object has been deleted.
 *
 * `fetch` runs the list's own query with the given keyset condition, order and limit, scoped
 * by environment (and parent) by the caller; `key` reads the cursor value of a row.
 */
export async function paginate<T>(
  params: PageParams,
  column: AnyPgColumn,
  fetch: (q: PageQuery) => Promise<T[]>,
  key: (row: T) => string,
): Promise<Page<T>> {
  const forward = params.before === undefined;
  const cursor = forward ? params.after : params.before;
  // Walking backwards (a `before` cursor) reads in the opposite direction, then flips the page.
  const ascending = (params.order === 'asc') === forward;
  const beyond = (value: string) => (ascending ? gt(column, value) : lt(column, value));
  const behind = (value: string) => (ascending ? lt(column, value) : gt(column, value));

  const rows = await fetch({
    keyset: cursor === undefined ? undefined : beyond(cursor),
    orderBy: ascending ? asc(column) : desc(column),
    limit: params.limit + 1,
  });
  const more = rows.length > params.limit;
  const page = more ? rows.slice(0, params.limit) : rows;

  // Is there anything on the other side of the page? Without a cursor, nothing precedes a
  // first page; with one, probe past the page's first row (the cursor row may be gone).
  let other = false;
  const first = page[0];
  if (cursor !== undefined) {
    const edge = first === undefined ? cursor : key(first);
    const probe = await fetch({
      keyset: and(behind(edge)),
      orderBy: ascending ? desc(column) : asc(column),
      limit: 1,
    });
    other = probe.length > 0;
  }

  if (!forward) page.reverse();
  const firstId = page[0] === undefined ? null : key(page[0]);
  const lastId = page.length === 0 ? null : key(page[page.length - 1] as T);
  const hasNext = forward ? more : other;
  const hasPrevious = forward ? other : more;
  return {
    data: page,
    list_metadata: {
      before: hasPrevious ? firstId : null,
      after: hasNext ? lastId : null,
    },
  };
}
