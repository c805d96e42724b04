import { z } from 'zod';
import { invalidRequest } from './errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `?limit=` (1-100, default 20) and `?cursor=` of every list (contract section 2). */
export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Page size.' }),
  cursor: z.string().max(512).optional().meta({ description: 'The `next_cursor` of the previous page.' }),
});
export type ListQuery = z.infer<typeof ListQuery>;

/** A keyset position: the last row's creation time and id. */
export interface Cursor {
  createdAt: Date;
  id: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt.toISOString(), cursor.id])).toString('base64url');
}

/** Decodes `?cursor=`; a malformed one is a 400 on the query. */
export function decodeCursor(value: string | undefined): Cursor | undefined {
  if (value === undefined) return undefined;
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as [string, string];
    const date = new Date(createdAt);
    if (typeof id !== 'string' || !UUID.test(id) || Number.isNaN(date.getTime())) throw new Error('bad cursor');
    return { createdAt: date, id };
  } catch {
    throw invalidRequest([{ in: 'query', field: 'cursor', code: 'invalid_format', message: 'is not a cursor from this list' }]);
  }
}

/** The list body: `limit + 1` rows fetched tells whether a next page exists. */
export function listPage<Row extends { createdAt: Date; id: string }, Out>(
  rows: Row[],
  limit: number,
  render: (row: Row) => Out,
): { data: Out[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { data: page.map(render), next_cursor: rows.length > limit && last ? encodeCursor(last) : null };
}

/** Prisma `where` for rows after a cursor, in (createdAt, id) order. */
export function afterCursor(cursor: Cursor | undefined): object {
  if (!cursor) return {};
  return { OR: [{ createdAt: { gt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { gt: cursor.id } }] };
}

/** The list order that matches afterCursor. */
export const LIST_ORDER = [{ createdAt: 'asc' }, { id: 'asc' }] as const;
