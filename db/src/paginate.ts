import { asc, desc, gt, gte, lt, lte, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

export type ListOrder = 'asc' | 'desc';

export interface PageParams {
  limit: number;
  order: ListOrder;
  after?: string | undefined;
  before?: string | undefined;
}

/** One page of rows, with the cursors of the pages around it (null where there is none). */
export interface Page<T> {
  rows: T[];
  /** The first row's key when rows precede the page. */
  before: string | null;
  /** The last row's key when rows follow the page. */
  after: string | null;
}

export type KeysetOp = 'gt' | 'gte' | 'lt' | 'lte';

const KEYSET_OPS = { gt, gte, lt, lte };

/**
 * The keyset comparison of a cursor column, or undefined without a cursor: with a value for a
 * query built per request, or with a placeholder for a prepared statement of that shape.
 */
export function keysetCondition(
  column: AnyPgColumn,
  op: KeysetOp | undefined,
  value: string | SQLWrapper,
): SQL | undefined {
  return op === undefined ? undefined : KEYSET_OPS[op](column, value);
}

/** What a list hands to its query: the keyset condition, the order and how many rows to fetch. */
export interface PageQuery {
  /** The keyset condition on the cursor column (undefined on a first page). */
  keyset: SQL | undefined;
  orderBy: SQL;
  limit: number;
  /**
   * The same query as plain values, for a list that runs prepared statements (one per shape)
   * instead of building SQL per request: the read direction and the cursor comparison.
   */
  shape: { ascending: boolean; cursor: { op: KeysetOp; value: string } | undefined };
}

/**
 * A page's query. Its SQL is built on first read: a list that runs a prepared statement per
 * shape never reads it. The getters are the class's: an object literal's getter is a new
 * accessor on every call, and V8 (Node 20) then keeps what the call's objects reference alive
 * across scavenges until a mark-compact (bench/README.md, tenth pass).
 */
class LazyPageQuery implements PageQuery {
  readonly limit: number;
  readonly shape: PageQuery['shape'];
  readonly #column: AnyPgColumn;

  constructor(column: AnyPgColumn, limit: number, ascending: boolean, cursor: PageQuery['shape']['cursor']) {
    this.#column = column;
    this.limit = limit;
    this.shape = { ascending, cursor };
  }

  get keyset(): SQL | undefined {
    const c = this.shape.cursor;
    return c ? keysetCondition(this.#column, c.op, c.value) : undefined;
  }

  get orderBy(): SQL {
    return this.shape.ascending ? asc(this.#column) : desc(this.#column);
  }
}

/**
 * The one pagination mechanism of the service: keyset on an id column (ids sort in creation
 * order), `limit + 1` rows to learn whether more follow, and a cheap probe in the other
 * direction (run concurrently) so that both cursors are exact even when the cursor's object
 * has been deleted.
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
  const query = (dir: boolean, op: KeysetOp | undefined, value: string | undefined, limit: number): PageQuery =>
    new LazyPageQuery(column, limit, dir, op === undefined || value === undefined ? undefined : { op, value });

  // Is there anything on the other side of the page? Without a cursor, nothing precedes a
  // first page. With one, the page's first row is the first row beyond the cursor, so "a row
  // before the page" is "a row at or behind the cursor" (the cursor row itself may be gone):
  // that probe does not depend on the page and runs concurrently with it.
  const [rows, probe] = await Promise.all([
    fetch(query(ascending, cursor === undefined ? undefined : ascending ? 'gt' : 'lt', cursor, params.limit + 1)),
    cursor === undefined ? Promise.resolve([]) : fetch(query(!ascending, ascending ? 'lte' : 'gte', cursor, 1)),
  ]);
  const more = rows.length > params.limit;
  const page = more ? rows.slice(0, params.limit) : rows;
  const other = probe.length > 0;

  if (!forward) page.reverse();
  const firstId = page[0] === undefined ? null : key(page[0]);
  const lastId = page.length === 0 ? null : key(page[page.length - 1] as T);
  const hasNext = forward ? more : other;
  const hasPrevious = forward ? other : more;
  return { rows: page, before: hasPrevious ? firstId : null, after: hasNext ? lastId : null };
}
