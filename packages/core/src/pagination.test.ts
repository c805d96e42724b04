import { ApiError } from './errors';
import { decodeCursor, encodeCursor, listPage, ListQuery } from './pagination';

describe('lists', () => {
  test('a cursor round-trips and a forged one is a 400 on the query', () => {
    const cursor = { createdAt: new Date('2024-12-01T09:30:00.000Z'), id: '0b7e0c2a-93a4-4a5e-8a55-1f0c2a7d9e11' };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    expect(decodeCursor(undefined)).toBeUndefined();
    const forgedId = Buffer.from(JSON.stringify(['2024-12-01T09:30:00.000Z', "x' OR 1=1"])).toString('base64url');
    expect(() => decodeCursor(forgedId)).toThrow(ApiError);
    try {
      decodeCursor('not-a-cursor');
      throw new Error('expected a failure');
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).options.errors?.[0]).toMatchObject({ in: 'query', field: 'cursor' });
    }
  });

  test('limit is 1-100 and defaults to 20', () => {
    expect(ListQuery.parse({}).limit).toBe(20);
    expect(ListQuery.parse({ limit: '100' }).limit).toBe(100);
    expect(ListQuery.safeParse({ limit: '101' }).success).toBe(false);
    expect(ListQuery.safeParse({ limit: '0' }).success).toBe(false);
  });

  test('next_cursor is set only when a further row exists', () => {
    const rows = [1, 2, 3].map((n) => ({ id: `00000000-0000-4000-8000-00000000000${n}`, createdAt: new Date(n) }));
    expect(listPage(rows, 2, (r) => r.id.slice(-1))).toEqual({ data: ['1', '2'], next_cursor: encodeCursor(rows[1]!) });
    expect(listPage(rows, 3, (r) => r.id.slice(-1))).toEqual({ data: ['1', '2', '3'], next_cursor: null });
  });
});
