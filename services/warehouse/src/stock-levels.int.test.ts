import { expectErrorBody } from '@platform/testing';
import { createItem, createLocation, levelInvariants, outbox, receive, reserve, stockOf, uniqueSku, useTestApp } from './test/warehouse';

const app = useTestApp();
const client = app.client;
const UNKNOWN = '6f1c2a4e-3b5d-4e7f-8a9b-0c1d2e3f4a5b';

describe('stock adjustments per level (contract section 18)', () => {
  test("the delta applies to the item's default location unless location_id names another level (null: unassigned)", async () => {
    const c = client();
    const [home, other] = [await createLocation(c), await createLocation(c)];
    const item = await createItem(c, { location_id: home.id });
    const atHome = await c.post(`/items/${item.id}/stock-adjustments`, { delta: 5, reason: 'receipt' }).expect(201);
    expect(atHome.body.adjustment).toMatchObject({ location_id: home.id, delta: 5, quantity_after: 5 });
    const atOther = await c.post(`/items/${item.id}/stock-adjustments`, { delta: 3, reason: 'receipt', location_id: other.id.toUpperCase() }).expect(201);
    expect(atOther.body.adjustment).toMatchObject({ location_id: other.id, quantity_after: 8 });
    const unassigned = await c.post(`/items/${item.id}/stock-adjustments`, { delta: 2, reason: 'return', location_id: null }).expect(201);
    expect(unassigned.body.adjustment).toMatchObject({ location_id: null, quantity_after: 10 });
    expect(unassigned.body.item).toMatchObject({ quantity: 10, version: 4 });

    const stock = (await c.get(`/items/${item.id}/stock`).expect(200)).body;
    const byLocation = [home.id, other.id].sort();
    expect(stock).toEqual({
      item_id: item.id,
      quantity: 10,
      levels: [
        { location_id: null, on_hand: 2, reserved: 0, available: 2 },
        ...byLocation.map((id) => ({ location_id: id, on_hand: id === home.id ? 5 : 3, reserved: 0, available: id === home.id ? 5 : 3 })),
      ],
    });
    expect((await outbox(app.db, c)).filter((e) => e.type === 'item.stock_adjusted').map((e) => e.data)).toEqual(
      [atHome, atOther, unassigned].map((r) => r.body.adjustment),
    );
  });

  test('an item without a default location adjusts its unassigned level; levels at 0 are not listed', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 4);
    await c.post(`/items/${item.id}/stock-adjustments`, { delta: -4, reason: 'sale' }).expect(201);
    expect((await c.get(`/items/${item.id}/stock`).expect(200)).body).toEqual({ item_id: item.id, quantity: 0, levels: [] });
  });

  test('on_hand below reserved at the level is 409 insufficient_stock, though the item holds more elsewhere', async () => {
    const c = client();
    const [home, other] = [await createLocation(c), await createLocation(c)];
    const item = await createItem(c, { location_id: home.id });
    await receive(c, item.id, 5);
    await receive(c, item.id, 50, other.id);
    await reserve(c, item.id, { quantity: 3 });
    const res = await c.post(`/items/${item.id}/stock-adjustments`, { delta: -3, reason: 'damage' }).expect(409);
    expect(expectErrorBody(res.body, 'conflict').errors).toEqual([
      { in: 'body', field: 'delta', code: 'insufficient_stock', message: expect.stringContaining('2 available') },
    ]);
    await c.post(`/items/${item.id}/stock-adjustments`, { delta: -2, reason: 'damage' }).expect(201);
    expect((await stockOf(c, item.id)).levels[home.id]).toEqual([3, 3, 0]);
    expect(await levelInvariants(app.db, c.identity.workspaceId)).toEqual([]);
  });

  test('a location of no location of the workspace is 400 not_found on location_id; an unknown item stays 404', async () => {
    const c = client();
    const elsewhere = await createLocation(client());
    const item = await createItem(c);
    for (const locationId of [UNKNOWN, elsewhere.id]) {
      const res = await c.post(`/items/${item.id}/stock-adjustments`, { delta: 1, reason: 'receipt', location_id: locationId }).expect(400);
      expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([
        { in: 'body', field: 'location_id', code: 'not_found', message: 'is not a location of this workspace' },
      ]);
    }
    await c.post(`/items/${UNKNOWN}/stock-adjustments`, { delta: 1, reason: 'receipt', location_id: UNKNOWN }).expect(404);
    expect((await stockOf(c, item.id)).quantity).toBe(0);
  });
});

describe('GET /items/{id}/stock', () => {
  test("another workspace's item, or none, is 404", async () => {
    const c = client();
    const item = await createItem(c);
    expectErrorBody((await client().get(`/items/${item.id}/stock`).expect(404)).body, 'not_found');
    expectErrorBody((await c.get(`/items/${UNKNOWN}/stock`).expect(404)).body, 'not_found');
  });
});

describe('a changed default location (sections 9 and 18)', () => {
  test("moves the old default level's on_hand and reserved, and its active reservations; the movement's quantity is that on_hand", async () => {
    const c = client();
    const [from, to, side] = [await createLocation(c), await createLocation(c), await createLocation(c)];
    const item = await createItem(c, { location_id: from.id });
    await receive(c, item.id, 10);
    await receive(c, item.id, 4, side.id);
    await receive(c, item.id, 1, to.id);
    const held = await reserve(c, item.id, { quantity: 3 });
    const patched = await c.patch(`/items/${item.id}`, { location_id: to.id }).expect(200);
    expect(patched.body).toMatchObject({ location_id: to.id, quantity: 15 });

    const { quantity, levels } = await stockOf(c, item.id);
    expect(quantity).toBe(15);
    expect(levels).toEqual({ [to.id]: [11, 3, 8], [side.id]: [4, 0, 4] });
    const movements = (await c.get(`/items/${item.id}/movements`).expect(200)).body.data;
    expect(movements).toEqual([
      expect.objectContaining({ from_location_id: from.id, to_location_id: to.id, quantity: 10, reason: 'default_location_changed' }),
    ]);
    expect((await c.get(`/reservations/${held.id}`).expect(200)).body).toMatchObject({ location_id: to.id, status: 'active' });
    // The moved reservation commits from its new level.
    await c.post(`/reservations/${held.id}/commit`).expect(200);
    expect((await stockOf(c, item.id)).levels[to.id]).toEqual([8, 0, 8]);

    // To no location: the default level becomes the unassigned one.
    await c.patch(`/items/${item.id}`, { location_id: null }).expect(200);
    expect((await stockOf(c, item.id)).levels).toEqual({ null: [8, 0, 8], [side.id]: [4, 0, 4] });
    expect(await levelInvariants(app.db, c.identity.workspaceId)).toEqual([]);
  });
});

describe('GET /locations/{id}/stock', () => {
  test('the items with a non-zero level there, by sku, paged with limit and cursor', async () => {
    const c = client();
    const [here, elsewhere] = [await createLocation(c), await createLocation(c)];
    const base = uniqueSku('LS');
    const skus = ['b', 'a', 'C', 'd', 'e'].map((suffix) => `${base}-${suffix}`);
    const items: Record<string, string> = {};
    for (const [index, sku] of skus.entries()) {
      const item = await createItem(c, { sku, location_id: here.id });
      items[sku] = item.id;
      await receive(c, item.id, index + 1);
    }
    // d: moved away entirely (its level here is 0); e: reserved in full (on_hand = reserved, available 0).
    await c.post(`/items/${items[skus[3]!]}/transfers`, { from_location_id: here.id, to_location_id: elsewhere.id, quantity: 4 }).expect(201);
    await reserve(c, items[skus[4]!]!, { quantity: 5 });

    const expected = [`${base}-C`, `${base}-a`, `${base}-b`, `${base}-e`].map((sku) => {
      const onHand = skus.indexOf(sku) + 1;
      const reserved = sku.endsWith('-e') ? 5 : 0;
      return { item_id: items[sku], sku, on_hand: onHand, reserved, available: onHand - reserved };
    });
    const seen: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: unknown[]; next_cursor: string | null } } = await c
        .get(`/locations/${here.id}/stock?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
        .expect(200);
      seen.push(...page.body.data);
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(expected);
    expect((await c.get(`/locations/${elsewhere.id}/stock`).expect(200)).body).toEqual({
      data: [{ item_id: items[skus[3]!], sku: skus[3], on_hand: 4, reserved: 0, available: 4 }],
      next_cursor: null,
    });
  });

  test("an unknown location, or another workspace's, is 404; a forged cursor is 400", async () => {
    const c = client();
    const theirs = await createLocation(client());
    expectErrorBody((await c.get(`/locations/${theirs.id}/stock`).expect(404)).body, 'not_found');
    expectErrorBody((await c.get(`/locations/${UNKNOWN}/stock`).expect(404)).body, 'not_found');
    const mine = await createLocation(c);
    const res = await c.get(`/locations/${mine.id}/stock?cursor=not-a-cursor`).expect(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([expect.objectContaining({ in: 'query', field: 'cursor', code: 'invalid_format' })]);
  });
});
