import { randomUUID } from 'node:crypto';
import { expectErrorBody } from '@platform/testing';
import { createItem, createLocation, outbox, useTestApp } from './test/warehouse';

const app = useTestApp();
const client = app.client;

describe('POST /items/bulk', () => {
  test('each entry is applied on its own: good ones succeed, each bad one gets the status it would get alone', async () => {
    const c = client();
    const [a, b] = [await createLocation(c), await createLocation(c)];
    const good = await createItem(c, { location_id: a.id });
    const good2 = await createItem(c);
    const holder = await createItem(c);
    const invalid = await createItem(c);
    const foreign = await createItem(client());
    const missing = randomUUID();

    const res = await c
      .post('/items/bulk', {
        items: [
          { id: good.id, name: 'Bulk renamed', location_id: b.id, metadata: { src: 'bulk' } },
          { id: invalid.id, name: '', quantity: 3 },
          { id: missing, name: 'x' },
          { id: foreign.id, name: 'x' },
          { id: good2.id, sku: holder.sku },
          { id: 'nope', name: 'x' },
          { name: 'no id' },
          { id: good2.id, category: 'bulk' },
        ],
      })
      .expect(200);
    const results = res.body.results;
    expect(results).toHaveLength(8);

    expect(results[0]).toEqual({
      id: good.id,
      status: 200,
      item: expect.objectContaining({ name: 'Bulk renamed', location_id: b.id, metadata: { src: 'bulk' }, version: 2 }),
    });
    expect(results[1]).toEqual({
      id: invalid.id,
      status: 400,
      error: {
        code: 'invalid_request',
        message: expect.any(String),
        errors: [
          { in: 'body', field: 'name', code: 'too_short', message: expect.any(String) },
          { in: 'body', field: 'quantity', code: 'unknown_field', message: expect.stringContaining('stock-adjustments') },
        ],
      },
    });
    expect(results[2]).toEqual({ id: missing, status: 404, error: { code: 'not_found', message: expect.any(String) } });
    expect(results[3]).toEqual({ id: foreign.id, status: 404, error: { code: 'not_found', message: expect.any(String) } });
    expect(results[4]).toEqual({
      id: good2.id,
      status: 409,
      error: { code: 'conflict', message: expect.any(String), errors: [{ in: 'body', field: 'sku', code: 'taken', message: expect.any(String) }] },
    });
    expect(results[5]).toMatchObject({ id: 'nope', status: 400, error: { code: 'invalid_request', errors: [{ field: 'id', code: 'invalid_format' }] } });
    expect(results[6]).toMatchObject({ id: null, status: 400, error: { code: 'invalid_request', errors: [{ field: 'id', code: 'required' }] } });
    expect(results[7]).toEqual({ id: good2.id, status: 200, item: expect.objectContaining({ category: 'bulk', sku: good2.sku, version: 2 }) });

    // What the answer says is what is stored.
    expect((await c.get(`/items/${good.id}`)).body).toEqual(results[0].item);
    expect((await c.get(`/items/${invalid.id}`)).body).toEqual(invalid);
    expect((await c.get(`/items/${good2.id}`)).body).toEqual(results[7].item);

    // item.updated for each updated entry; the moved one also has its movement and event.
    const events = await outbox(app.db, c);
    expect(
      events
        .filter((e) => e.type === 'item.updated')
        .map((e) => e.data)
        .sort((x, y) => (x.id < y.id ? -1 : 1)),
    ).toEqual([results[0].item, results[7].item].sort((x, y) => (x.id < y.id ? -1 : 1)));
    const moves = (await c.get(`/items/${good.id}/movements`)).body.data;
    expect(moves).toEqual([expect.objectContaining({ from_location_id: a.id, to_location_id: b.id })]);
    expect(events.filter((e) => e.type === 'item.location_changed').map((e) => e.data)).toEqual(moves);
  });

  test('[ok, NUL, ok]: 200 with three results (200, 400, 200), both good entries applied', async () => {
    const c = client();
    const [first, bad, third] = [await createItem(c), await createItem(c), await createItem(c)];
    const raw = `{"items":[{"id":"${first.id}","name":"First"},{"id":"${bad.id}","name":"a\\u0000b"},{"id":"${third.id}","name":"Third"}]}`;
    const res = await c.post('/items/bulk', raw).expect(200);
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([200, 400, 200]);
    expect(res.body.results[1]).toEqual({
      id: bad.id,
      status: 400,
      error: {
        code: 'invalid_request',
        message: expect.any(String),
        errors: [{ in: 'body', field: 'name', code: 'invalid_format', message: expect.any(String) }],
      },
    });
    expect((await c.get(`/items/${first.id}`)).body).toMatchObject({ name: 'First', version: 2 });
    expect((await c.get(`/items/${bad.id}`)).body).toEqual(bad);
    expect((await c.get(`/items/${third.id}`)).body).toMatchObject({ name: 'Third', version: 2 });
  });

  test('a lone surrogate or a bad key in one entry refuses that entry only; __proto__ keys are kept', async () => {
    const c = client();
    const [a, b, d] = [await createItem(c), await createItem(c), await createItem(c)];
    const raw =
      `{"items":[{"id":"${a.id}","metadata":{"k":"\\ud800"}},{"id":"${b.id}","metadata":{"k\\u0000":"v"},"x\\udc00":1},` +
      `{"id":"${d.id}","metadata":{"__proto__":"x","constructor":"y"}}]}`;
    const res = await c.post('/items/bulk', raw).expect(200);
    const [ra, rb, rd] = res.body.results;
    expect(ra).toMatchObject({ id: a.id, status: 400, error: { errors: [{ field: 'metadata.k', code: 'invalid_format' }] } });
    expect(rb.status).toBe(400);
    expect(rb.error.errors.map((e: { field: string; code: string }) => [e.field, e.code])).toEqual([
      ['metadata.k\\u0000', 'invalid_format'],
      ['x\\udc00', 'invalid_format'],
      ['x\\udc00', 'unknown_field'],
    ]);
    expect(rd).toMatchObject({ id: d.id, status: 200 });
    expect(JSON.stringify(rd.item.metadata)).toBe('{"__proto__":"x","constructor":"y"}');
    expect((await c.get(`/items/${a.id}`)).body).toEqual(a);
    expect((await c.get(`/items/${b.id}`)).body).toEqual(b);
  });

  test('entries are applied in order: the later of two entries taking one sku gets 409', async () => {
    const c = client();
    const [x, y] = [await createItem(c), await createItem(c)];
    const res = await c
      .post('/items/bulk', {
        items: [
          { id: x.id, sku: 'SHARED' },
          { id: y.id, sku: 'SHARED' },
        ],
      })
      .expect(200);
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([200, 409]);
  });

  test('100 entries are accepted', async () => {
    const c = client();
    const item = await createItem(c);
    const items = Array.from({ length: 100 }, (_, i) => ({ id: item.id, metadata: { n: String(i) } }));
    const res = await c.post('/items/bulk', { items }).expect(200);
    expect(res.body.results).toHaveLength(100);
    expect((await c.get(`/items/${item.id}`)).body).toMatchObject({ metadata: { n: '99' }, version: 101 });
  });

  test.each([
    ['no items field', {}, [['items', 'required']]],
    ['an empty items array', { items: [] }, [['items', 'too_few_items']]],
    ['101 items', { items: Array.from({ length: 101 }, () => ({ id: randomUUID() })) }, [['items', 'too_many_items']]],
    ['items that is an object', { items: { id: 'x' } }, [['items', 'invalid_type']]],
    ['items that is null', { items: null }, [['items', 'invalid_type']]],
    ['an entry that is not an object', { items: [{ id: randomUUID() }, 'x'] }, [['items.1', 'invalid_type']]],
    ['an unknown top-level field', { items: [{ id: randomUUID() }], dry_run: true }, [['dry_run', 'unknown_field']]],
  ])('%s is a 400 for the whole request', async (_name, body, expected) => {
    const c = client();
    const res = await c.post('/items/bulk', body).expect(400);
    const errors = expectErrorBody(res.body, 'invalid_request').errors!;
    expect(errors.map((e) => [e.field, e.code])).toEqual(expected);
  });

  test('a body that is a JSON array is a 400', async () => {
    const res = await client()
      .post('/items/bulk', JSON.stringify([{ id: randomUUID() }]))
      .expect(400);
    expectErrorBody(res.body, 'invalid_request');
  });
});
