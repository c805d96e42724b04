import { expectErrorBody } from '@platform/testing';
import { createItem, outbox, receive, RFC3339_MS, useTestApp } from './test/warehouse';

const app = useTestApp();
const client = app.client;

describe('POST /items/{id}/stock-adjustments', () => {
  test('201 { adjustment, item }: quantity and version move, item.stock_adjusted carries the adjustment', async () => {
    const c = client();
    const item = await createItem(c);
    const res = await c.post(`/items/${item.id}/stock-adjustments`, { delta: 12, reason: 'receipt', note: 'PO-77' }).expect(201);
    expect(res.body).toEqual({
      adjustment: {
        id: expect.any(String),
        item_id: item.id,
        location_id: null,
        delta: 12,
        reason: 'receipt',
        note: 'PO-77',
        quantity_after: 12,
        created_at: expect.stringMatching(RFC3339_MS),
      },
      item: { ...item, quantity: 12, version: 2, updated_at: expect.stringMatching(RFC3339_MS) },
    });
    const sale = await c.post(`/items/${item.id}/stock-adjustments`, { delta: -5, reason: 'sale' }).expect(201);
    expect(sale.body.adjustment).toMatchObject({ delta: -5, reason: 'sale', note: null, quantity_after: 7 });
    expect((await c.get(`/items/${item.id}`)).body).toMatchObject({ quantity: 7, version: 3 });
    expect((await outbox(app.db, c)).filter((e) => e.type === 'item.stock_adjusted').map((e) => e.data)).toEqual([res.body.adjustment, sale.body.adjustment]);
  });

  test.each(['receipt', 'sale', 'return', 'damage', 'correction'])('reason %s is accepted', async (reason) => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 1);
    await c.post(`/items/${item.id}/stock-adjustments`, { delta: reason === 'receipt' || reason === 'return' ? 1 : -1, reason }).expect(201);
  });

  test('a result below 0 is 409 insufficient_stock and records nothing', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 3);
    const res = await c.post(`/items/${item.id}/stock-adjustments`, { delta: -4, reason: 'sale' }).expect(409);
    expect(expectErrorBody(res.body, 'conflict').errors?.[0]).toMatchObject({ code: 'insufficient_stock' });
    expect((await c.get(`/items/${item.id}`)).body).toMatchObject({ quantity: 3, version: 2 });
    expect(await app.db.stockAdjustment.count({ where: { itemId: item.id } })).toBe(1);
  });

  test('100 concurrent +1 adjustments raise the quantity by exactly 100, with 100 adjustment records', async () => {
    const c = client();
    const item = await createItem(c);
    const results = await Promise.all(Array.from({ length: 100 }, () => c.post(`/items/${item.id}/stock-adjustments`, { delta: 1, reason: 'receipt' })));
    expect(results.map((r) => r.status)).toEqual(Array(100).fill(201));
    expect((await c.get(`/items/${item.id}`)).body).toMatchObject({ quantity: 100, version: 101 });
    const adjustments = await app.db.stockAdjustment.findMany({ where: { itemId: item.id } });
    expect(adjustments).toHaveLength(100);
    // Each call saw its own result: the quantities after are exactly 1..100.
    expect(adjustments.map((a) => a.quantityAfter).sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  test('concurrent decrements never take the quantity below zero', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 10);
    const results = await Promise.all(Array.from({ length: 30 }, () => c.post(`/items/${item.id}/stock-adjustments`, { delta: -1, reason: 'sale' })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 409)).toHaveLength(20);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.errors[0].code).toBe('insufficient_stock');
    expect((await c.get(`/items/${item.id}`)).body.quantity).toBe(0);
    expect(await app.db.stockAdjustment.count({ where: { itemId: item.id } })).toBe(11);
  });

  test('item.reorder_needed (data = the item) is written when the quantity crosses below min_stock, once', async () => {
    const c = client();
    const item = await createItem(c, { min_stock: 5 });
    await receive(c, item.id, 6);
    await c.post(`/items/${item.id}/stock-adjustments`, { delta: -1, reason: 'sale' }).expect(201); // 5: not below
    const crossing = await c.post(`/items/${item.id}/stock-adjustments`, { delta: -1, reason: 'sale' }).expect(201); // 4: below
    await c.post(`/items/${item.id}/stock-adjustments`, { delta: -1, reason: 'damage' }).expect(201); // 3: still below
    const reorders = (await outbox(app.db, c)).filter((e) => e.type === 'item.reorder_needed');
    expect(reorders).toEqual([{ type: 'item.reorder_needed', data: crossing.body.item }]);
  });

  test('no reorder event without min_stock', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 1);
    await c.post(`/items/${item.id}/stock-adjustments`, { delta: -1, reason: 'sale' }).expect(201);
    expect((await outbox(app.db, c)).map((e) => e.type)).not.toContain('item.reorder_needed');
  });

  test('a quantity past the integer column is 409, never a 500', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 2_147_483_647);
    const res = await c.post(`/items/${item.id}/stock-adjustments`, { delta: 1, reason: 'receipt' }).expect(409);
    expect(expectErrorBody(res.body, 'conflict').errors?.[0]).toMatchObject({ field: 'delta', code: 'too_large' });
  });

  test.each([
    ['delta 0', { delta: 0, reason: 'sale' }, [['delta', 'invalid_value']]],
    ['a fractional delta', { delta: 1.5, reason: 'sale' }, [['delta', 'invalid_type']]],
    ['a delta as a string', { delta: '5', reason: 'sale' }, [['delta', 'invalid_type']]],
    ['a delta beyond a 32-bit integer', { delta: 2 ** 31, reason: 'receipt' }, [['delta', 'too_large']]],
    [
      'no delta and no reason',
      {},
      [
        ['delta', 'required'],
        ['reason', 'required'],
      ],
    ],
    ['an unknown reason', { delta: 1, reason: 'theft' }, [['reason', 'invalid_enum']]],
    ['a null reason', { delta: 1, reason: null }, [['reason', 'invalid_enum']]],
    ['a note over 500 characters', { delta: 1, reason: 'receipt', note: 'n'.repeat(501) }, [['note', 'too_long']]],
    ['a note that is a number', { delta: 1, reason: 'receipt', note: 5 }, [['note', 'invalid_type']]],
    ['an unknown field', { delta: 1, reason: 'receipt', warehouse_id: null }, [['warehouse_id', 'unknown_field']]],
    ['a location_id that is not a UUID', { delta: 1, reason: 'receipt', location_id: 'A3' }, [['location_id', 'invalid_format']]],
  ])('%s gives 400 listing each problem', async (_name, body, expected) => {
    const c = client();
    const item = await createItem(c);
    const res = await c.post(`/items/${item.id}/stock-adjustments`, body).expect(400);
    const errors = expectErrorBody(res.body, 'invalid_request').errors!;
    expect(errors.map((e) => [e.field, e.code]).sort()).toEqual([...expected].sort());
    expect((await c.get(`/items/${item.id}`)).body.quantity).toBe(0);
  });
});
