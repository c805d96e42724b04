import { expectErrorBody } from '@platform/testing';
import { createItem, useTestApp } from './test/warehouse';

const { client } = useTestApp();

const keys = (n: number, value = 'v') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value]));

/** Bodies that PATCH /items/{id} and POST /items (with sku and name added) both refuse. */
const BAD_FIELDS: [string, Record<string, unknown>, [string, string][]][] = [
  ['a sku of 65 characters', { sku: 'S'.repeat(65) }, [['sku', 'too_long']]],
  ['a sku of 65 code points', { sku: '😀'.repeat(65) }, [['sku', 'too_long']]],
  ['an empty sku', { sku: '' }, [['sku', 'too_short']]],
  ['a null sku', { sku: null }, [['sku', 'invalid_type']]],
  ['a numeric sku', { sku: 42 }, [['sku', 'invalid_type']]],
  ['a name of 201 characters', { name: 'n'.repeat(201) }, [['name', 'too_long']]],
  ['a null name', { name: null }, [['name', 'invalid_type']]],
  ['a name that is an object', { name: { first: 'x' } }, [['name', 'invalid_type']]],
  ['a category that is not a slug', { category: 'Power Tools' }, [['category', 'invalid_format']]],
  ['a category with a trailing hyphen', { category: 'tools-' }, [['category', 'invalid_format']]],
  ['a category of 65 characters', { category: 'c'.repeat(65) }, [['category', 'too_long']]],
  ['a category that is a number', { category: 7 }, [['category', 'invalid_type']]],
  ['a negative min_stock', { min_stock: -1 }, [['min_stock', 'too_small']]],
  ['a fractional min_stock', { min_stock: 2.5 }, [['min_stock', 'invalid_type']]],
  ['a min_stock as a string', { min_stock: '5' }, [['min_stock', 'invalid_type']]],
  ['a min_stock beyond a 32-bit integer', { min_stock: 2 ** 31 }, [['min_stock', 'too_large']]],
  ['a location_id that is not a UUID', { location_id: 'aisle-3' }, [['location_id', 'invalid_format']]],
  ['a location_id that is a number', { location_id: 3 }, [['location_id', 'invalid_type']]],
  ['metadata that is an array', { metadata: ['a'] }, [['metadata', 'invalid_type']]],
  ['metadata that is a string', { metadata: 'colour=red' }, [['metadata', 'invalid_type']]],
  ['metadata with 21 keys', { metadata: keys(21) }, [['metadata', 'too_many_keys']]],
  ['a metadata value of 501 characters', { metadata: { colour: 'x'.repeat(501) } }, [['metadata.colour', 'too_long']]],
  ['a metadata key of 501 characters', { metadata: { ['k'.repeat(501)]: 'v' } }, [[`metadata.${'k'.repeat(501)}`, 'too_long']]],
  ['an empty metadata key', { metadata: { '': 'v' } }, [['metadata.', 'too_short']]],
  ['a numeric metadata value', { metadata: { weight: 12 } }, [['metadata.weight', 'invalid_type']]],
  ['a boolean metadata value', { metadata: { fragile: true } }, [['metadata.fragile', 'invalid_type']]],
  ['a nested metadata value', { metadata: { dims: { w: '1' } } }, [['metadata.dims', 'invalid_type']]],
  ['quantity', { quantity: 5 }, [['quantity', 'unknown_field']]],
  ['an unknown field', { colour: 'red' }, [['colour', 'unknown_field']]],
  [
    'read-only fields',
    { id: 'x', version: 3 },
    [
      ['id', 'unknown_field'],
      ['version', 'unknown_field'],
    ],
  ],
  [
    'several problems at once',
    { sku: '', min_stock: -2, metadata: { a: 1, b: 'x'.repeat(501) }, extra: true },
    [
      ['sku', 'too_short'],
      ['min_stock', 'too_small'],
      ['metadata.a', 'invalid_type'],
      ['metadata.b', 'too_long'],
      ['extra', 'unknown_field'],
    ],
  ],
];

const sorted = (pairs: [string, string][]) => [...pairs].sort((a, b) => (a.join() < b.join() ? -1 : 1));

describe('malformed bodies give 400 with the contract error body', () => {
  test.each(BAD_FIELDS)('PATCH with %s', async (_name, body, expected) => {
    const c = client();
    const item = await createItem(c);
    const res = await c.patch(`/items/${item.id}`, body).expect(400);
    const errors = expectErrorBody(res.body, 'invalid_request').errors!;
    expect(sorted(errors.map((e) => [e.field, e.code]))).toEqual(sorted(expected));
    expect(errors.every((e) => e.in === 'body' && typeof e.message === 'string')).toBe(true);
    expect((await c.get(`/items/${item.id}`)).body).toEqual(item);
  });

  test.each(BAD_FIELDS)('POST /items with %s', async (_name, body, expected) => {
    const c = client();
    const res = await c.post('/items', { sku: 'OK-1', name: 'ok', ...body }).expect(400);
    const errors = expectErrorBody(res.body, 'invalid_request').errors!;
    expect(sorted(errors.map((e) => [e.field, e.code]))).toEqual(sorted(expected));
    expect((await c.get('/items')).body.data).toEqual([]);
  });

  test('POST /items without sku and name lists both as required', async () => {
    const res = await client().post('/items', {}).expect(400);
    expect(sorted(expectErrorBody(res.body, 'invalid_request').errors!.map((e) => [e.field, e.code]))).toEqual([
      ['name', 'required'],
      ['sku', 'required'],
    ]);
  });

  test.each([
    ['malformed JSON', '{"name": ', 'application/json'],
    ['a JSON array', '[{"name": "x"}]', 'application/json'],
    ['JSON null', 'null', 'application/json'],
    ['a JSON string', '"name"', 'application/json'],
    ['text/plain', 'name=x', 'text/plain'],
    ['a form body', 'name=x', 'application/x-www-form-urlencoded'],
  ])('%s is a 400 on PATCH, POST /items, bulk and adjustments, never a 5xx', async (_name, raw, type) => {
    const c = client();
    const item = await createItem(c);
    for (const res of [
      await c.patch(`/items/${item.id}`, raw, { 'content-type': type }),
      await c.post('/items', raw, { 'content-type': type }),
      await c.post('/items/bulk', raw, { 'content-type': type }),
      await c.post(`/items/${item.id}/stock-adjustments`, raw, { 'content-type': type }),
      await c.post('/locations', raw, { 'content-type': type }),
    ]) {
      expect(res.status).toBe(400);
      expectErrorBody(res.body, 'invalid_request');
    }
  });

  test('a body over 1 MiB is 401: its signature cannot be verified (the gateway answers 413 before)', async () => {
    const c = client();
    const item = await createItem(c);
    const res = await c.patch(`/items/${item.id}`, { name: 'x'.repeat(1024 * 1024 + 10) });
    expect(res.status).toBe(401);
    expectErrorBody(res.body, 'unauthorized');
  });

  test('a huge string is refused by its length rule, not by the server', async () => {
    const c = client();
    const item = await createItem(c);
    const res = await c.patch(`/items/${item.id}`, { name: 'x'.repeat(500_000), metadata: { k: 'y'.repeat(100_000) } }).expect(400);
    expect(sorted(res.body.error.errors.map((e: { field: string; code: string }) => [e.field, e.code]))).toEqual([
      ['metadata.k', 'too_long'],
      ['name', 'too_long'],
    ]);
  });
});
