import { ApiError } from './errors';
import { decodeCursor, encodeCursor, listPage, ListQuery, pageOf, parseCursor } from './pagination';

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

describe('a cursor the platform did not issue is a 400, whatever it holds', () => {
  const ID = '0b7e0c2a-93a4-4a5e-8a55-1f0c2a7d9e11';
  const forge = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  test.each([
    ['year 0', forge(['0000-01-01T00:00:00.000Z', ID])],
    ['year 10000', forge(['+010000-01-01T00:00:00.000Z', ID])],
    ['a date that is no date', forge(['not a date', ID])],
    ['NaN', forge([null, ID])],
    ['a number for the date', forge([0, ID])],
    ['an id that is not a UUID', forge(['2024-12-01T09:30:00.000Z', 'x'])],
    ['an upper-case id', forge(['2024-12-01T09:30:00.000Z', ID.toUpperCase()])],
    ['an extra element', forge(['2024-12-01T09:30:00.000Z', ID, 1])],
    ['one element', forge(['2024-12-01T09:30:00.000Z'])],
    ['an object', forge({ createdAt: '2024-12-01T09:30:00.000Z', id: ID })],
    ['another spelling of the date', forge(['2024-12-01T10:30:00+01:00', ID])],
    ['stray characters', `${forge(['2024-12-01T09:30:00.000Z', ID])}!!`],
    ['not base64 JSON', '%%%'],
  ])('%s', (_name, cursor) => {
    expect(parseCursor(cursor)).toBeUndefined();
    expect(() => decodeCursor(cursor)).toThrow(ApiError);
    expect(ListQuery.safeParse({ cursor }).success).toBe(false);
  });
});

describe('pageOf', () => {
  const row = (n: number) => ({ id: `00000000-0000-4000-8000-00000000000${n}`, createdAt: new Date(Date.UTC(2024, 0, n)) });

  test('asks for one row more than the page after the cursor, and says whether another page follows', async () => {
    const cursor = encodeCursor(row(1));
    const asked: unknown[] = [];
    const page = await pageOf(
      { limit: 2, cursor },
      async (p) => (asked.push(p), [row(2), row(3), row(4)]),
      (r) => r.id,
    );
    expect(asked).toEqual([{ after: decodeCursor(cursor), take: 3 }]);
    expect(page).toEqual({ data: [row(2).id, row(3).id], next_cursor: encodeCursor(row(3)) });
    expect(
      await pageOf(
        { limit: 2 },
        async () => [row(2)],
        (r) => r.id,
      ),
    ).toEqual({ data: [row(2).id], next_cursor: null });
  });

  test('a forged cursor is a 400 before anything is read', async () => {
    const fetch = jest.fn(async () => []);
    await expect(pageOf({ limit: 2, cursor: 'forged' }, fetch, (r) => r)).rejects.toBeInstanceOf(ApiError);
    expect(fetch).not.toHaveBeenCalled();
  });
});
