import { expectErrorBody } from '@platform/testing';
import { createItem, createLocation, levelInvariants, outbox, receive, reserve, RFC3339_MS, stockOf, useTestApp } from './test/warehouse';

const app = useTestApp();
const client = app.client;
const UNKNOWN = '6f1c2a4e-3b5d-4e7f-8a9b-0c1d2e3f4a5b';

describe('POST /items/{id}/transfers', () => {
  test('201 { transfer, item }: both levels change in one transaction, one movement, the quantity unchanged, item.stock_transferred', async () => {
    const c = client();
    const [a, b] = [await createLocation(c), await createLocation(c)];
    const item = await createItem(c, { location_id: a.id });
    await receive(c, item.id, 10);
    const before = (await c.get(`/items/${item.id}`).expect(200)).body;

    const res = await c.post(`/items/${item.id}/transfers`, { from_location_id: a.id, to_location_id: b.id, quantity: 4, note: 'To the shop' }).expect(201);
    expect(res.body).toEqual({
      transfer: {
        id: expect.any(String),
        item_id: item.id,
        from_location_id: a.id,
        to_location_id: b.id,
        quantity: 4,
        note: 'To the shop',
        created_at: expect.stringMatching(RFC3339_MS),
      },
      item: before,
    });
    const back = await c.post(`/items/${item.id}/transfers`, { from_location_id: b.id, to_location_id: null, quantity: 1 }).expect(201);
    expect(back.body.transfer).toMatchObject({ from_location_id: b.id, to_location_id: null, note: null });

    expect(await stockOf(c, item.id)).toEqual({ quantity: 10, levels: { null: [1, 0, 1], [a.id]: [6, 0, 6], [b.id]: [3, 0, 3] } });
    const movements = (await c.get(`/items/${item.id}/movements`).expect(200)).body.data;
    expect(movements).toEqual(
      [res, back].map((r) => {
        const { note: _note, ...movement } = r.body.transfer;
        return { ...movement, reason: 'transfer' };
      }),
    );
    expect((await outbox(app.db, c)).filter((e) => e.type === 'item.stock_transferred').map((e) => e.data)).toEqual([res.body.transfer, back.body.transfer]);
  });

  test('more than available at the source (reserved stock counts) is 409 insufficient_stock and changes nothing', async () => {
    const c = client();
    const [a, b] = [await createLocation(c), await createLocation(c)];
    const item = await createItem(c, { location_id: a.id });
    await receive(c, item.id, 5);
    await reserve(c, item.id, { quantity: 2 });
    const res = await c.post(`/items/${item.id}/transfers`, { from_location_id: a.id, to_location_id: b.id, quantity: 4 }).expect(409);
    expect(expectErrorBody(res.body, 'conflict').errors).toEqual([
      { in: 'body', field: 'quantity', code: 'insufficient_stock', message: expect.stringContaining('3 available') },
    ]);
    // A level that was never stocked has nothing available.
    await c.post(`/items/${item.id}/transfers`, { from_location_id: null, to_location_id: a.id, quantity: 1 }).expect(409);
    expect(await stockOf(c, item.id)).toEqual({ quantity: 5, levels: { [a.id]: [5, 2, 3] } });
    expect((await outbox(app.db, c)).filter((e) => e.type === 'item.stock_transferred')).toEqual([]);
  });

  test.each([
    [
      'no fields',
      {},
      [
        ['from_location_id', 'required'],
        ['to_location_id', 'required'],
        ['quantity', 'required'],
      ],
    ],
    ['the same location twice', { from_location_id: 'SAME', to_location_id: 'SAME', quantity: 1 }, [['to_location_id', 'same_location']]],
    ['null on both ends', { from_location_id: null, to_location_id: null, quantity: 1 }, [['to_location_id', 'same_location']]],
    ['quantity 0', { from_location_id: null, to_location_id: 'SAME', quantity: 0 }, [['quantity', 'too_small']]],
    ['quantity over 1,000,000,000', { from_location_id: null, to_location_id: 'SAME', quantity: 1_000_000_001 }, [['quantity', 'too_large']]],
    ['a fractional quantity', { from_location_id: null, to_location_id: 'SAME', quantity: 1.5 }, [['quantity', 'invalid_type']]],
    ['a note over 500 characters', { from_location_id: null, to_location_id: 'SAME', quantity: 1, note: 'n'.repeat(501) }, [['note', 'too_long']]],
    ['an unknown field', { from_location_id: null, to_location_id: 'SAME', quantity: 1, reason: 'x' }, [['reason', 'unknown_field']]],
    ['a location that is not a UUID', { from_location_id: 'A3', to_location_id: null, quantity: 1 }, [['from_location_id', 'invalid_format']]],
    [
      'unknown locations on both ends',
      { from_location_id: UNKNOWN, to_location_id: 'THEIRS', quantity: 1 },
      [
        ['from_location_id', 'not_found'],
        ['to_location_id', 'not_found'],
      ],
    ],
  ])('%s gives 400 listing each problem', async (_name, template, expected) => {
    const c = client();
    const [mine, theirs] = [await createLocation(c), await createLocation(client())];
    const body = JSON.parse(JSON.stringify(template).replaceAll('"SAME"', JSON.stringify(mine.id)).replaceAll('"THEIRS"', JSON.stringify(theirs.id)));
    const item = await createItem(c);
    await receive(c, item.id, 3);
    const res = await c.post(`/items/${item.id}/transfers`, body).expect(400);
    const errors = expectErrorBody(res.body, 'invalid_request').errors!;
    expect(errors.map((e) => [e.field, e.code]).sort()).toEqual([...expected].sort());
    expect(errors.every((e) => e.in === 'body')).toBe(true);
  });

  test("an unknown item, or another workspace's, is 404", async () => {
    const c = client();
    const [a, b] = [await createLocation(c), await createLocation(c)];
    const theirs = await createItem(client());
    for (const id of [UNKNOWN, theirs.id]) {
      expectErrorBody((await c.post(`/items/${id}/transfers`, { from_location_id: a.id, to_location_id: b.id, quantity: 1 }).expect(404)).body, 'not_found');
    }
  });

  test('concurrent transfers both ways and adjustments at both ends keep on_hand >= reserved >= 0 and the quantity the sum', async () => {
    const c = client();
    const [a, b] = [await createLocation(c), await createLocation(c)];
    const item = await createItem(c, { location_id: a.id });
    await receive(c, item.id, 20);
    await receive(c, item.id, 20, b.id);
    await reserve(c, item.id, { quantity: 5, location_id: a.id });
    await reserve(c, item.id, { quantity: 5, location_id: b.id });
    const calls = Array.from({ length: 80 }, (_, n) => {
      const [from, to] = n % 2 === 0 ? [a.id, b.id] : [b.id, a.id];
      switch (n % 4) {
        case 0:
        case 1:
          return c.post(`/items/${item.id}/transfers`, { from_location_id: from, to_location_id: to, quantity: 3 });
        case 2:
          return c.post(`/items/${item.id}/stock-adjustments`, { delta: -2, reason: 'sale', location_id: from });
        default:
          return c.post(`/items/${item.id}/stock-adjustments`, { delta: 1, reason: 'receipt', location_id: to });
      }
    });
    const results = await Promise.all(calls);
    for (const r of results) {
      expect([201, 409]).toContain(r.status);
      if (r.status === 409) expect(r.body.error.errors[0].code).toBe('insufficient_stock');
    }
    expect(await levelInvariants(app.db, c.identity.workspaceId)).toEqual([]);
    const adjusted = results.filter((r) => r.status === 201 && r.body.adjustment).reduce((sum, r) => sum + (r.body.adjustment.delta as number), 0);
    const { quantity, levels } = await stockOf(c, item.id);
    expect(quantity).toBe(40 + adjusted);
    expect(levels[a.id]![1]).toBe(5);
    expect(levels[b.id]![1]).toBe(5);
    expect(levels[a.id]![0] + levels[b.id]![0]).toBe(quantity);
  });
});
