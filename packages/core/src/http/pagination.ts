import { z } from 'zod';
import { invalidRequest } from './errors';
import { isStorableInstant } from './validation';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CURSOR_MESSAGE = 'is not a cursor from this list';

/** A keyset position: the last row's creation time and id. */
export interface Cursor {
  createdAt: Date;
  id: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt.toISOString(), cursor.id])).toString('base64url');
}

/**
 * The position a cursor holds, or undefined when the platform did not issue it: exactly the
 * bytes encodeCursor writes for a storable instant (years 0001-9999) and a lowercase UUID.
 */
export function parseCursor(value: string): Cursor | undefined {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) return undefined;
  const [createdAt, id] = decoded as unknown[];
  if (typeof createdAt !== 'string' || typeof id !== 'string' || !UUID.test(id)) return undefined;
  const date = new Date(createdAt);
  if (Number.isNaN(date.getTime()) || !isStorableInstant(date)) return undefined;
  const cursor = { createdAt: date, id };
  // Base64 decoding skips stray characters and JSON has many spellings: only the issued bytes pass.
  return encodeCursor(cursor) === value ? cursor : undefined;
}

/** Decodes `?cursor=`; one the platform did not issue is a 400 on the query (`invalid_format`, `cursor`). */
export function decodeCursor(value: string | undefined): Cursor | undefined {
  if (value === undefined) return undefined;
  const cursor = parseCursor(value);
  if (!cursor) throw invalidRequest([{ in: 'query', field: 'cursor', code: 'invalid_format', message: CURSOR_MESSAGE }]);
  return cursor;
}

/** `?limit=` (1-100, default 20) and `?cursor=` of every list (contract section 2); a cursor is checked with the other fields. */
export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Page size.' }),
  cursor: z
    .string()
    .max(512)
    .refine((value) => parseCursor(value) !== undefined, { message: CURSOR_MESSAGE, params: { code: 'invalid_format' } })
    .optional()
    .meta({ description: 'The `next_cursor` of the previous page.' }),
});
export type ListQuery = z.infer<typeof ListQuery>;

/** Where a row stands in its list's order: by default its creation time and id. */
export type PositionOf<Row> = (row: Row) => Cursor;
const byCreation = (row: { createdAt: Date; id: string }): Cursor => ({ createdAt: row.createdAt, id: row.id });

/** The list body: `limit + 1` rows fetched tells whether a next page exists. */
export function listPage<Row extends { createdAt: Date; id: string }, Out>(
  rows: Row[],
  limit: number,
  render: (row: Row) => Out,
  positionOf: PositionOf<Row> = byCreation,
): { data: Out[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { data: page.map(render), next_cursor: rows.length > limit && last ? encodeCursor(positionOf(last)) : null };
}

/**
 * One page of a list: asks `fetch` for one row more than the page after the query's cursor (a bad
 * cursor is a 400 before anything is read), so `next_cursor` says whether another page follows.
 * A list in another order than (created_at, id) names the row's position in it with `positionOf`.
 */
export async function pageOf<Row extends { createdAt: Date; id: string }, Out>(
  query: { limit: number; cursor?: string },
  fetch: (page: { after: Cursor | undefined; take: number }) => Promise<Row[]>,
  render: (row: Row) => Out,
  positionOf: PositionOf<Row> = byCreation,
): Promise<{ data: Out[]; next_cursor: string | null }> {
  const rows = await fetch({ after: decodeCursor(query.cursor), take: query.limit + 1 });
  return listPage(rows, query.limit, render, positionOf);
}

/** Prisma `where` for rows after a cursor, in (createdAt, id) order. */
export function afterCursor(cursor: Cursor | undefined): object {
  return afterPosition('createdAt', cursor);
}

/**
 * Prisma `where` for rows after a cursor in (`field`, id) order. The redundant `field >= time`
 * lets PostgreSQL start an index scan at the cursor: the OR alone cannot, so without it every
 * page read past all the rows before it (a 100,000-ticket list: 20-60 ms a page against 0.05 ms).
 */
export function afterPosition<F extends string>(field: F, cursor: Cursor | undefined): object {
  if (!cursor) return {};
  return { [field]: { gte: cursor.createdAt }, OR: [{ [field]: { gt: cursor.createdAt } }, { [field]: cursor.createdAt, id: { gt: cursor.id } }] };
}

/** The list order that matches afterCursor. */
export const LIST_ORDER = [{ createdAt: 'asc' }, { id: 'asc' }] as const;
