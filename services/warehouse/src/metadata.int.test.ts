import { expectErrorBody } from '@platform/testing';
import { createItem, outbox, uniqueSku, useTestApp } from './test/warehouse';

const app = useTestApp();

/** A JSON object's own entries, sorted (PostgreSQL's jsonb keeps keys in its own order). */
const entries = (value: object) => Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1));

describe('metadata is stored as sent or refused, never changed', () => {
  test('__proto__ and constructor keys are stored and read back (POST, GET, list, PATCH merge, event)', async () => {
    const c = app.client();
    const created = await c.post('/items', `{"sku":"${uniqueSku()}","name":"W","metadata":{"__proto__":"x","constructor":"y"}}`).expect(201);
    expect(JSON.stringify(created.body.metadata)).toBe('{"__proto__":"x","constructor":"y"}');
    const read = await c.get(`/items/${created.body.id}`).expect(200);
    expect(read.text).toContain('"metadata":{"__proto__":"x","constructor":"y"}');
    expect((await c.get('/items').expect(200)).text).toContain('"metadata":{"__proto__":"x","constructor":"y"}');

    const patched = await c.patch(`/items/${created.body.id}`, '{"metadata":{"__proto__":null,"toString":"z"}}').expect(200);
    expect(entries(patched.body.metadata)).toEqual([
      ['constructor', 'y'],
      ['toString', 'z'],
    ]);
    expect(entries((await c.get(`/items/${created.body.id}`)).body.metadata)).toEqual([
      ['constructor', 'y'],
      ['toString', 'z'],
    ]);
    const events = await outbox(app.db, c);
    expect(events.map((e) => entries(e.data.metadata))).toEqual([
      [
        ['__proto__', 'x'],
        ['constructor', 'y'],
      ],
      [
        ['constructor', 'y'],
        ['toString', 'z'],
      ],
    ]);
  });

  test('a __proto__ field of the body itself is an unknown field, not dropped', async () => {
    const c = app.client();
    const res = await c.post('/items', `{"sku":"${uniqueSku()}","name":"W","__proto__":{"quantity":5}}`).expect(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors!.map((e) => [e.field, e.code])).toEqual([['__proto__', 'unknown_field']]);
  });

  test.each([
    ['a lone high surrogate value', '{"metadata":{"k":"\\ud800"}}', 'metadata.k'],
    ['a lone low surrogate value', '{"metadata":{"k":"a\\udc00"}}', 'metadata.k'],
    ['a NUL value', '{"metadata":{"k":"\\u0000"}}', 'metadata.k'],
    ['a lone surrogate key', '{"metadata":{"\\ud800":"v"}}', 'metadata.\\ud800'],
    ['a NUL in the name', '{"name":"W\\u0000"}', 'name'],
  ])('%s is 400 invalid_format and nothing is stored', async (_name, raw, field) => {
    const c = app.client();
    const item = await createItem(c);
    const patch = await c.patch(`/items/${item.id}`, raw).expect(400);
    expect(expectErrorBody(patch.body, 'invalid_request').errors).toEqual([{ in: 'body', field, code: 'invalid_format', message: expect.any(String) }]);
    expect((await c.get(`/items/${item.id}`)).body).toEqual(item);
    const body = JSON.parse(raw) as Record<string, unknown>;
    const post = await c.post('/items', JSON.stringify({ sku: uniqueSku(), name: 'W', ...body })).expect(400);
    expect(expectErrorBody(post.body, 'invalid_request').errors!.map((e) => e.field)).toEqual([field]);
    expect((await c.get('/items')).body.data).toEqual([item]);
  });

  test('?sku=%00 and ?sku=%C0 are 400 in query, not 500 and not a search for U+FFFD', async () => {
    const c = app.client();
    for (const sku of ['%00', '%C0', '%ED%A0%80']) {
      const res = await c.get(`/items?sku=${sku}`).expect(400);
      expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([{ in: 'query', field: 'sku', code: 'invalid_format', message: expect.any(String) }]);
    }
  });
});
