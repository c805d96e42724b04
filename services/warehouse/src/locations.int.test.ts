import { expectErrorBody } from '@platform/testing';
import { createLocation, RFC3339_MS, uniqueSku, useTestApp } from './test/warehouse';

const { client } = useTestApp();

describe('locations', () => {
  test('POST /locations creates a location: 201 { id, name, code, created_at }', async () => {
    const res = await client().post('/locations', { name: 'Aisle 3, shelf B', code: 'A3-B' }).expect(201);
    expect(res.body).toEqual({ id: expect.any(String), name: 'Aisle 3, shelf B', code: 'A3-B', created_at: expect.stringMatching(RFC3339_MS) });
  });

  test('a code is unique in the workspace (409 taken) but free in another workspace', async () => {
    const c = client();
    await createLocation(c, 'DOCK-1');
    const res = await c.post('/locations', { name: 'Again', code: 'DOCK-1' }).expect(409);
    expect(expectErrorBody(res.body, 'conflict').errors?.[0]).toEqual({ in: 'body', field: 'code', code: 'taken', message: expect.any(String) });
    await createLocation(client(), 'DOCK-1');
  });

  test('10 concurrent creations with one code give one 201 and nine 409', async () => {
    const c = client();
    const results = await Promise.all(Array.from({ length: 10 }, () => c.post('/locations', { name: 'x', code: 'SAME' })));
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
  });

  test('GET /locations lists only the workspace’s locations, with cursor pagination', async () => {
    const c = client();
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await createLocation(c));
    await createLocation(client());
    const page1 = await c.get('/locations?limit=2').expect(200);
    expect(page1.body.data).toEqual(created.slice(0, 2));
    const page2 = await c.get(`/locations?limit=2&cursor=${page1.body.next_cursor}`).expect(200);
    expect(page2.body).toEqual({ data: [created[2]], next_cursor: null });
  });

  test.each([
    [
      'no body fields',
      {},
      [
        ['name', 'required'],
        ['code', 'required'],
      ],
    ],
    ['a code with spaces', { name: 'x', code: 'A 1' }, [['code', 'invalid_format']]],
    ['a code over 64 characters', { name: 'x', code: 'A'.repeat(65) }, [['code', 'too_long']]],
    ['an empty name', { name: '', code: 'A1' }, [['name', 'too_short']]],
    ['a name that is a number', { name: 7, code: 'A1' }, [['name', 'invalid_type']]],
    ['an unknown field', { name: 'x', code: 'A1', zone: 'cold' }, [['zone', 'unknown_field']]],
  ])('%s gives 400 listing each problem', async (_name, body, expected) => {
    const res = await client().post('/locations', body).expect(400);
    const errors = expectErrorBody(res.body, 'invalid_request').errors!;
    expect(errors.map((e) => [e.field, e.code]).sort()).toEqual([...expected].sort());
  });

  test('creating needs items:write, listing items:read', async () => {
    const reader = client(['items:read']);
    const res = await reader.post('/locations', { name: 'x', code: uniqueSku() }).expect(403);
    expect(expectErrorBody(res.body, 'forbidden_scope').required_scope).toBe('items:write');
    await reader.get('/locations').expect(200);
    await client(['items:write']).get('/locations').expect(403);
  });
});
