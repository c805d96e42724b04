import { randomUUID } from 'node:crypto';
import { expectErrorBody } from '@platform/testing';
import { createItem, createLocation, outbox, receive, RFC3339_MS, useTestApp } from './test/warehouse';

const app = useTestApp();
const client = app.client;

describe('PATCH /items/{id}: fields', () => {
  test('sets every patchable field; version increments and the ETag follows; item.updated is written', async () => {
    const c = client();
    const item = await createItem(c, { category: 'tools', min_stock: 1 });
    const res = await c.patch(`/items/${item.id}`, { sku: 'NEW-SKU', name: 'Renamed', category: 'hand-tools', min_stock: 0, metadata: { a: '1' } }).expect(200);
    expect(res.body).toEqual({
      ...item,
      sku: 'NEW-SKU',
      name: 'Renamed',
      category: 'hand-tools',
      min_stock: 0,
      metadata: { a: '1' },
      version: 2,
      updated_at: expect.stringMatching(RFC3339_MS),
    });
    expect(res.headers.etag).toBe('"2"');
    expect((await c.get(`/items/${item.id}`).expect(200)).body).toEqual(res.body);
    expect((await outbox(app.db, c)).filter((e) => e.type === 'item.updated')).toEqual([{ type: 'item.updated', data: res.body }]);
  });

  test('null clears category, min_stock, location_id and metadata', async () => {
    const c = client();
    const location = await createLocation(c);
    const item = await createItem(c, { category: 'tools', min_stock: 3, location_id: location.id, metadata: { a: '1' } });
    const res = await c.patch(`/items/${item.id}`, { category: null, min_stock: null, location_id: null, metadata: null }).expect(200);
    expect(res.body).toMatchObject({ category: null, min_stock: null, location_id: null, metadata: {}, version: 2 });
  });

  test('a patch that changes nothing keeps the version and writes no event', async () => {
    const c = client();
    const item = await createItem(c, { category: 'tools', metadata: { a: '1' } });
    const same = await c.patch(`/items/${item.id}`, { sku: item.sku, category: 'tools', metadata: { a: '1' } }).expect(200);
    expect(same.body).toEqual(item);
    expect((await c.patch(`/items/${item.id}`, {}).expect(200)).body).toEqual(item);
    expect((await outbox(app.db, c)).map((e) => e.type)).toEqual(['item.created']);
  });

  test('quantity is rejected with a message pointing to stock adjustments', async () => {
    const c = client();
    const item = await createItem(c);
    const res = await c.patch(`/items/${item.id}`, { quantity: 5 }).expect(400);
    const errors = expectErrorBody(res.body, 'invalid_request').errors!;
    expect(errors).toEqual([{ in: 'body', field: 'quantity', code: 'unknown_field', message: expect.stringContaining('POST /items/{id}/stock-adjustments') }]);
    expect((await c.get(`/items/${item.id}`)).body.quantity).toBe(0);
  });

  test('every problem is reported in one 400, including the location and the merged metadata', async () => {
    const c = client();
    const item = await createItem(c, { metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v'])) });
    const res = await c
      .patch(`/items/${item.id}`, {
        sku: 'x'.repeat(65),
        name: '',
        category: 'Not_A_Slug',
        min_stock: -1,
        location_id: randomUUID(),
        metadata: { extra: 'v' },
        quantity: 1,
        colour: 'red',
      })
      .expect(400);
    const errors = expectErrorBody(res.body, 'invalid_request').errors!;
    expect(errors.map((e) => [e.in, e.field, e.code]).sort()).toEqual(
      [
        ['body', 'sku', 'too_long'],
        ['body', 'name', 'too_short'],
        ['body', 'category', 'invalid_format'],
        ['body', 'min_stock', 'too_small'],
        ['body', 'location_id', 'not_found'],
        ['body', 'metadata', 'too_many_keys'],
        ['body', 'quantity', 'unknown_field'],
        ['body', 'colour', 'unknown_field'],
      ].sort(),
    );
    expect((await c.get(`/items/${item.id}`)).body).toEqual(item);
  });

  test('an unknown item is 404 when the body is valid', async () => {
    const res = await client().patch(`/items/${randomUUID()}`, { name: 'x' }).expect(404);
    expectErrorBody(res.body, 'not_found');
  });
});

describe('PATCH /items/{id}: metadata is a JSON Merge Patch (RFC 7396)', () => {
  test('keys are set, replaced and removed; other keys stay', async () => {
    const c = client();
    const item = await createItem(c, { metadata: { colour: 'red', size: 'M', keep: 'yes' } });
    const res = await c.patch(`/items/${item.id}`, { metadata: { colour: 'blue', size: null, new: 'n', absent: null } }).expect(200);
    expect(res.body.metadata).toEqual({ colour: 'blue', keep: 'yes', new: 'n' });
  });

  test('metadata: null clears all and is returned as {}', async () => {
    const c = client();
    const item = await createItem(c, { metadata: { a: '1', b: '2' } });
    expect((await c.patch(`/items/${item.id}`, { metadata: null }).expect(200)).body.metadata).toEqual({});
    expect((await c.get(`/items/${item.id}`)).body.metadata).toEqual({});
  });

  test('the limit of 20 keys applies to the result of the merge', async () => {
    const c = client();
    const full = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v']));
    const item = await createItem(c, { metadata: full });
    const over = await c.patch(`/items/${item.id}`, { metadata: { k20: 'v' } }).expect(400);
    expect(over.body.error.errors).toEqual([{ in: 'body', field: 'metadata', code: 'too_many_keys', message: expect.any(String) }]);
    // One removed and one added: still 20, accepted.
    const swapped = await c.patch(`/items/${item.id}`, { metadata: { k0: null, k20: 'v' } }).expect(200);
    expect(Object.keys(swapped.body.metadata)).toHaveLength(20);
    expect(swapped.body.metadata).not.toHaveProperty('k0');
  });

  test('keys and values of 500 characters are accepted (code points, not UTF-16 units)', async () => {
    const c = client();
    const item = await createItem(c);
    const emoji500 = '😀'.repeat(500);
    const res = await c.patch(`/items/${item.id}`, { metadata: { ['k'.repeat(500)]: emoji500 } }).expect(200);
    expect(res.body.metadata['k'.repeat(500)]).toBe(emoji500);
  });
});

describe('PATCH /items/{id}: location and movements', () => {
  test('a changed location writes exactly one movement with the on-hand quantity, and item.location_changed', async () => {
    const c = client();
    const [a, b] = [await createLocation(c), await createLocation(c)];
    const item = await createItem(c, { location_id: a.id });
    await receive(c, item.id, 7);
    const res = await c.patch(`/items/${item.id}`, { location_id: b.id }).expect(200);
    expect(res.body.location_id).toBe(b.id);
    const movements = (await c.get(`/items/${item.id}/movements`).expect(200)).body;
    expect(movements).toEqual({
      data: [
        {
          id: expect.any(String),
          item_id: item.id,
          from_location_id: a.id,
          to_location_id: b.id,
          quantity: 7,
          reason: 'default_location_changed',
          created_at: expect.stringMatching(RFC3339_MS),
        },
      ],
      next_cursor: null,
    });
    const events = await outbox(app.db, c);
    expect(events.filter((e) => e.type === 'item.location_changed')).toEqual([{ type: 'item.location_changed', data: movements.data[0] }]);
    expect(events.filter((e) => e.type === 'item.updated')).toEqual([{ type: 'item.updated', data: res.body }]);
  });

  test('the same location again writes no movement; null and back write one each', async () => {
    const c = client();
    const a = await createLocation(c);
    const item = await createItem(c, { location_id: a.id });
    await c.patch(`/items/${item.id}`, { location_id: a.id }).expect(200);
    await c.patch(`/items/${item.id}`, { location_id: a.id.toUpperCase(), name: 'renamed' }).expect(200);
    expect((await c.get(`/items/${item.id}/movements`)).body.data).toEqual([]);
    expect((await outbox(app.db, c)).filter((e) => e.type === 'item.location_changed')).toEqual([]);

    await c.patch(`/items/${item.id}`, { location_id: null }).expect(200);
    await c.patch(`/items/${item.id}`, { location_id: a.id }).expect(200);
    const moves = (await c.get(`/items/${item.id}/movements`)).body.data;
    expect(moves.map((m: { from_location_id: string | null; to_location_id: string | null }) => [m.from_location_id, m.to_location_id])).toEqual([
      [a.id, null],
      [null, a.id],
    ]);
  });

  test('a location of another workspace is 400 { field: location_id, code: not_found } and nothing moves', async () => {
    const c = client();
    const foreign = await createLocation(client());
    const item = await createItem(c);
    const res = await c.patch(`/items/${item.id}`, { location_id: foreign.id }).expect(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([{ in: 'body', field: 'location_id', code: 'not_found', message: expect.any(String) }]);
    expect((await c.get(`/items/${item.id}/movements`)).body.data).toEqual([]);
  });

  test('concurrent moves to one location write exactly one movement', async () => {
    const c = client();
    const [a, b] = [await createLocation(c), await createLocation(c)];
    const item = await createItem(c, { location_id: a.id });
    const results = await Promise.all(Array.from({ length: 10 }, () => c.patch(`/items/${item.id}`, { location_id: b.id })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    const moves = (await c.get(`/items/${item.id}/movements`)).body.data;
    expect(moves).toHaveLength(1);
    expect(moves[0]).toMatchObject({ from_location_id: a.id, to_location_id: b.id });
    expect((await c.get(`/items/${item.id}`)).body.version).toBe(2);
  });

  test('movements are listed with cursor pagination', async () => {
    const c = client();
    const [a, b] = [await createLocation(c), await createLocation(c)];
    const item = await createItem(c);
    for (const location of [a, b, a]) await c.patch(`/items/${item.id}`, { location_id: location.id }).expect(200);
    const page1 = await c.get(`/items/${item.id}/movements?limit=2`).expect(200);
    expect(page1.body.data.map((m: { to_location_id: string }) => m.to_location_id)).toEqual([a.id, b.id]);
    const page2 = await c.get(`/items/${item.id}/movements?limit=2&cursor=${page1.body.next_cursor}`).expect(200);
    expect(page2.body.data.map((m: { from_location_id: string }) => m.from_location_id)).toEqual([b.id]);
    expect(page2.body.next_cursor).toBeNull();
  });
});

describe('PATCH /items/{id}: sku uniqueness', () => {
  test('a sku used by another item of the workspace is 409 taken', async () => {
    const c = client();
    const first = await createItem(c);
    const second = await createItem(c);
    const res = await c.patch(`/items/${second.id}`, { sku: first.sku, name: 'not applied' }).expect(409);
    expect(expectErrorBody(res.body, 'conflict').errors?.[0]).toEqual({ in: 'body', field: 'sku', code: 'taken', message: expect.any(String) });
    expect((await c.get(`/items/${second.id}`)).body).toEqual(second);
  });

  test('two concurrent PATCHes setting the same sku: exactly one 200 and one 409 taken', async () => {
    for (let round = 0; round < 5; round++) {
      const c = client();
      const [x, y] = [await createItem(c), await createItem(c)];
      const results = await Promise.all([x, y].map((item) => c.patch(`/items/${item.id}`, { sku: 'CONTESTED' })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const loser = results.find((r) => r.status === 409)!;
      expect(expectErrorBody(loser.body, 'conflict').errors?.[0]).toMatchObject({ in: 'body', field: 'sku', code: 'taken' });
      expect((await c.get('/items?sku=CONTESTED')).body.data).toHaveLength(1);
    }
  });

  test('the same sku in another workspace is free', async () => {
    const taken = await createItem(client());
    const c = client();
    const item = await createItem(c);
    await c.patch(`/items/${item.id}`, { sku: taken.sku }).expect(200);
  });
});

describe('PATCH /items/{id}: ETag and If-Match', () => {
  test('the current ETag is accepted; a stale one is 409 version conflict and changes nothing', async () => {
    const c = client();
    const item = await createItem(c);
    const etag = (await c.get(`/items/${item.id}`)).headers.etag!;
    const first = await c.patch(`/items/${item.id}`, { name: 'first' }, { 'if-match': etag }).expect(200);
    expect(first.headers.etag).toBe('"2"');
    const stale = await c.patch(`/items/${item.id}`, { name: 'second' }, { 'if-match': etag }).expect(409);
    const error = expectErrorBody(stale.body, 'conflict');
    expect(error.message).toMatch(/version conflict/);
    expect(error.errors).toEqual([{ in: 'header', field: 'If-Match', code: 'version_mismatch', message: expect.any(String) }]);
    expect((await c.get(`/items/${item.id}`)).body.name).toBe('first');
  });

  test('a stock adjustment changes the item, so it changes the ETag', async () => {
    const c = client();
    const item = await createItem(c);
    await receive(c, item.id, 1);
    await c.patch(`/items/${item.id}`, { name: 'x' }, { 'if-match': '"1"' }).expect(409);
    await c.patch(`/items/${item.id}`, { name: 'x' }, { 'if-match': '"2"' }).expect(200);
  });

  test('"*", a list containing the current ETag, and no If-Match are accepted; a weak tag never matches', async () => {
    const c = client();
    const item = await createItem(c);
    await c.patch(`/items/${item.id}`, { name: 'a' }, { 'if-match': '*' }).expect(200);
    await c.patch(`/items/${item.id}`, { name: 'b' }, { 'if-match': '"1", "2"' }).expect(200);
    await c.patch(`/items/${item.id}`, { name: 'c' }).expect(200);
    await c.patch(`/items/${item.id}`, { name: 'd' }, { 'if-match': 'W/"4"' }).expect(409);
  });

  test('a malformed If-Match is 400 in header', async () => {
    const c = client();
    const item = await createItem(c);
    const res = await c.patch(`/items/${item.id}`, { name: 'x' }, { 'if-match': '1' }).expect(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([
      { in: 'header', field: 'if-match', code: 'invalid_format', message: expect.any(String) },
    ]);
  });

  test('of concurrent PATCHes with the same If-Match exactly one wins', async () => {
    const c = client();
    const item = await createItem(c);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => c.patch(`/items/${item.id}`, { name: `n${i}` }, { 'if-match': '"1"' })));
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    expect((await c.get(`/items/${item.id}`)).body.version).toBe(2);
  });

  test('concurrent PATCHes without If-Match all apply (merge patches of distinct keys all survive)', async () => {
    const c = client();
    const item = await createItem(c);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => c.patch(`/items/${item.id}`, { metadata: { [`k${i}`]: 'v' } })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    const final = (await c.get(`/items/${item.id}`)).body;
    expect(Object.keys(final.metadata).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `k${i}`).sort());
    expect(final.version).toBe(11);
  });
});
