import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { expectErrorBody, serviceClient, testIdentity } from '@platform/testing';
import { createItem, createLocation, outbox, RFC3339_MS, uniqueSku, useTestApp } from './test/warehouse';

const app = useTestApp();
const client = app.client;

describe('POST /items', () => {
  test('creates an item: 201 with every field, quantity 0, version 1, an ETag and an item.created event', async () => {
    const c = client();
    const location = await createLocation(c);
    const res = await c
      .post('/items', {
        sku: 'BOLT-M8',
        name: 'Bolt M8',
        category: 'fasteners',
        min_stock: 5,
        location_id: location.id,
        metadata: { colour: 'zinc', drop: null },
      })
      .expect(201);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({
      id: expect.any(String),
      sku: 'BOLT-M8',
      name: 'Bolt M8',
      category: 'fasteners',
      min_stock: 5,
      location_id: location.id,
      metadata: { colour: 'zinc' },
      quantity: 0,
      version: 1,
      created_at: expect.stringMatching(RFC3339_MS),
      updated_at: res.body.created_at,
    });
    expect(res.headers.etag).toBe('"1"');
    expect(await outbox(app.db, c)).toEqual([{ type: 'item.created', data: res.body }]);
  });

  test('optional fields default to null and {}', async () => {
    const res = await client().post('/items', { sku: 'X', name: 'Plain' }).expect(201);
    expect(res.body).toMatchObject({ category: null, min_stock: null, location_id: null, metadata: {} });
  });

  test('a sku already used in the workspace gives 409 taken; another workspace may use it', async () => {
    const c = client();
    await createItem(c, { sku: 'DUP' });
    const res = await c.post('/items', { sku: 'DUP', name: 'Again' }).expect(409);
    expect(expectErrorBody(res.body, 'conflict').errors?.[0]).toEqual({ in: 'body', field: 'sku', code: 'taken', message: expect.any(String) });
    await createItem(client(), { sku: 'DUP' });
  });

  test('20 concurrent creations with one sku give exactly one 201 and nineteen 409 taken, never a 500', async () => {
    const c = client();
    const results = await Promise.all(Array.from({ length: 20 }, () => c.post('/items', { sku: 'RACE', name: 'Race' })));
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(19).fill(409)]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.errors[0]).toMatchObject({ field: 'sku', code: 'taken' });
    expect((await c.get('/items?sku=RACE').expect(200)).body.data).toHaveLength(1);
  });

  test('a location of another workspace (or none) is 400 not_found, reported with the other problems', async () => {
    const foreign = await createLocation(client());
    const c = client();
    const res = await c.post('/items', { sku: '', name: 'x', location_id: foreign.id }).expect(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([
      { in: 'body', field: 'sku', code: 'too_short', message: expect.any(String) },
      { in: 'body', field: 'location_id', code: 'not_found', message: expect.any(String) },
    ]);
    const unknown = await c.post('/items', { sku: 'A', name: 'x', location_id: randomUUID() }).expect(400);
    expect(unknown.body.error.errors).toEqual([expect.objectContaining({ field: 'location_id', code: 'not_found' })]);
  });

  test('quantity cannot be set at creation; the message points to stock adjustments', async () => {
    const res = await client().post('/items', { sku: 'Q', name: 'x', quantity: 10 }).expect(400);
    const [error] = expectErrorBody(res.body, 'invalid_request').errors!;
    expect(error).toMatchObject({ in: 'body', field: 'quantity', code: 'unknown_field' });
    expect(error!.message).toContain('stock-adjustments');
  });

  test('metadata over 20 keys is 400 too_many_keys', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']));
    const res = await client().post('/items', { sku: 'M', name: 'x', metadata }).expect(400);
    expect(res.body.error.errors).toEqual([{ in: 'body', field: 'metadata', code: 'too_many_keys', message: expect.any(String) }]);
  });
});

describe('GET /items/{id}', () => {
  test('returns the item with ETag "<version>"', async () => {
    const c = client();
    const item = await createItem(c);
    const res = await c.get(`/items/${item.id}`).expect(200);
    expect(res.body).toEqual(item);
    expect(res.headers.etag).toBe('"1"');
  });

  test('another workspace’s item is 404 on every item route', async () => {
    const item = await createItem(client());
    const stranger = client();
    expectErrorBody((await stranger.get(`/items/${item.id}`).expect(404)).body, 'not_found');
    await stranger.patch(`/items/${item.id}`, { name: 'mine' }).expect(404);
    await stranger.get(`/items/${item.id}/movements`).expect(404);
    await stranger.post(`/items/${item.id}/stock-adjustments`, { delta: 1, reason: 'receipt' }).expect(404);
    await client().get(`/items/${randomUUID()}`).expect(404);
  });

  test.each([
    ['GET', '/items/not-a-uuid'],
    ['PATCH', '/items/123'],
    ['GET', '/items/bulk/movements'],
    ['POST', '/items/xyz/stock-adjustments'],
  ])('%s %s: a path id that is not a UUID is 400 in path', async (method, path) => {
    const c = client();
    const res = method === 'GET' ? await c.get(path) : method === 'PATCH' ? await c.patch(path, {}) : await c.post(path, { delta: 1, reason: 'sale' });
    expect(res.status).toBe(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([{ in: 'path', field: 'id', code: 'invalid_format', message: expect.any(String) }]);
  });
});

describe('GET /items', () => {
  test('filters by sku and category, pages with a cursor, and shows only the workspace’s items', async () => {
    const c = client();
    const tools = [];
    for (let i = 0; i < 3; i++) tools.push(await createItem(c, { category: 'tools' }));
    const other = await createItem(c, { sku: 'ONLY-ME', category: 'paint' });
    await createItem(client(), { category: 'tools' });

    const page1 = await c.get('/items?category=tools&limit=2').expect(200);
    expect(page1.body.data).toEqual(tools.slice(0, 2));
    const page2 = await c.get(`/items?category=tools&limit=2&cursor=${page1.body.next_cursor}`).expect(200);
    expect(page2.body).toEqual({ data: [tools[2]], next_cursor: null });

    expect((await c.get('/items?sku=ONLY-ME').expect(200)).body).toEqual({ data: [other], next_cursor: null });
    expect((await c.get('/items').expect(200)).body.data).toHaveLength(4);
    expect((await c.get('/items?sku=nothing').expect(200)).body).toEqual({ data: [], next_cursor: null });
    expect((await c.get('/items?sku=&category=').expect(200)).body.data).toHaveLength(4);
    expect((await c.get('/items?sku=ONLY-ME&category=tools').expect(200)).body.data).toEqual([]);
  });

  test('bad query values are 400 in query, all at once', async () => {
    const res = await client().get('/items?limit=500&category=Not%20A%20Slug&cursor=%%%').expect(400);
    const errors = expectErrorBody(res.body, 'invalid_request').errors!;
    expect(errors.map((e) => [e.in, e.field]).sort()).toEqual([
      ['query', 'category'],
      ['query', 'cursor'],
      ['query', 'limit'],
    ]);
  });

  test('a cursor that was not issued by the list is 400, not a 5xx', async () => {
    const forged = Buffer.from(JSON.stringify(['2024-01-01T00:00:00.000Z', 'not-a-uuid'])).toString('base64url');
    const res = await client().get(`/items?cursor=${forged}`);
    expect(res.status).toBe(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors?.[0]).toMatchObject({ in: 'query', field: 'cursor' });
  });
});

describe('gateway identity', () => {
  test('an unsigned request is 401', async () => {
    const res = await request(app.server).get('/items').expect(401);
    expectErrorBody(res.body, 'unauthorized');
  });

  test('each route checks its scope (items:read, items:write, stock:write)', async () => {
    const writer = client(['items:write']);
    const item = await createItem(writer);
    expect(expectErrorBody((await writer.get(`/items/${item.id}`).expect(403)).body, 'forbidden_scope').required_scope).toBe('items:read');
    const noStock = serviceClient('warehouse', app.server, { ...testIdentity(['items:read', 'items:write']), workspaceId: writer.identity.workspaceId });
    const res = await noStock.post(`/items/${item.id}/stock-adjustments`, { delta: 1, reason: 'receipt' }).expect(403);
    expect(res.body.error.required_scope).toBe('stock:write');
    await noStock.post('/items/bulk', { items: [{ id: item.id, name: 'x' }] }).expect(200);
    await client(['items:read'])
      .post('/items/bulk', { items: [{ id: item.id }] })
      .expect(403);
    await client(['stock:write']).post('/items', { sku: uniqueSku(), name: 'x' }).expect(403);
  });
});
