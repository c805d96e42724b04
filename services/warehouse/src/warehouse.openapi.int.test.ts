import request from 'supertest';
import { openApiValidator } from '@platform/testing';
import { backdate, createItem, createLocation, receive, reserve, useTestApp } from './test/warehouse';
import { warehouseApiDocument } from './warehouse.openapi';

const app = useTestApp();
const document = warehouseApiDocument();
const validator = openApiValidator(document as never);

/** Asserts that a real answer is what the document says `METHOD path` answers with that status. */
function expectDocumented(method: string, path: string, res: { status: number; body: unknown }): void {
  expect(validator.responseProblems(method, path, res.status, res.body)).toEqual([]);
}

test('GET /openapi.json answers the document without a gateway signature', async () => {
  const res = await request(app.server).get('/openapi.json').expect(200);
  expect(res.body).toEqual(JSON.parse(JSON.stringify(document)));
});

describe('real answers match the documented schemas', () => {
  test('locations, items, movements, stock adjustments and bulk', async () => {
    const c = app.client();
    const first = await createLocation(c);
    const second = await createLocation(c);
    expectDocumented('GET', '/locations', await c.get('/locations').expect(200));

    const created = await c.post('/items', { sku: `DOC-${Date.now()}`, name: 'Widget', location_id: first.id, metadata: { colour: 'blue' } }).expect(201);
    expectDocumented('POST', '/items', created);
    expectDocumented('GET', '/items/{id}', await c.get(`/items/${created.body.id}`).expect(200));
    expectDocumented('GET', '/items', await c.get('/items?limit=1').expect(200));
    await receive(c, created.body.id, 5);
    expectDocumented('PATCH', '/items/{id}', await c.patch(`/items/${created.body.id}`, { location_id: second.id, min_stock: 2 }).expect(200));
    expectDocumented('GET', '/items/{id}/movements', await c.get(`/items/${created.body.id}/movements`).expect(200));
    expectDocumented(
      'POST',
      '/items/{id}/stock-adjustments',
      await c.post(`/items/${created.body.id}/stock-adjustments`, { delta: -1, reason: 'sale' }).expect(201),
    );
    expectDocumented(
      'POST',
      '/items/{id}/stock-adjustments',
      await c.post(`/items/${created.body.id}/stock-adjustments`, { delta: -100, reason: 'sale' }).expect(409),
    );

    const other = await createItem(c);
    const bulk = await c
      .post('/items/bulk', {
        items: [
          { id: other.id, name: 'Renamed' },
          { id: created.body.id, quantity: 3 },
        ],
      })
      .expect(200);
    expect(bulk.body.results.map((result: { status: number }) => result.status)).toEqual([200, 400]);
    expectDocumented('POST', '/items/bulk', bulk);
  });

  test('stock levels, transfers and reservations, with their errors', async () => {
    const c = app.client();
    const [first, second] = [await createLocation(c), await createLocation(c)];
    const item = await createItem(c, { location_id: first.id });
    await receive(c, item.id, 5);
    expectDocumented('GET', '/items/{id}/stock', await c.get(`/items/${item.id}/stock`).expect(200));
    expectDocumented('GET', '/locations/{id}/stock', await c.get(`/locations/${first.id}/stock`).expect(200));
    expectDocumented('GET', '/locations/{id}/stock', await c.get(`/locations/${item.id}/stock`).expect(404));
    const transfer = { from_location_id: first.id, to_location_id: second.id, quantity: 2, note: 'Shop floor' };
    expectDocumented('POST', '/items/{id}/transfers', await c.post(`/items/${item.id}/transfers`, transfer).expect(201));
    expectDocumented('POST', '/items/{id}/transfers', await c.post(`/items/${item.id}/transfers`, { ...transfer, quantity: 99 }).expect(409));
    expectDocumented('POST', '/items/{id}/transfers', await c.post(`/items/${item.id}/transfers`, { ...transfer, to_location_id: first.id }).expect(400));

    const created = await c.post(`/items/${item.id}/reservations`, { quantity: 1, reference: 'Order 1' }).expect(201);
    expectDocumented('POST', '/items/{id}/reservations', created);
    expectDocumented('POST', '/items/{id}/reservations', await c.post(`/items/${item.id}/reservations`, { quantity: 99 }).expect(409));
    expectDocumented('GET', '/reservations/{id}', await c.get(`/reservations/${created.body.id}`).expect(200));
    expectDocumented('GET', '/items/{id}/reservations', await c.get(`/items/${item.id}/reservations?status=active`).expect(200));
    expectDocumented('POST', '/reservations/{id}/commit', await c.post(`/reservations/${created.body.id}/commit`).expect(200));
    expectDocumented('POST', '/reservations/{id}/commit', await c.post(`/reservations/${created.body.id}/commit`).expect(409));
    const released = await reserve(c, item.id, { quantity: 1 });
    expectDocumented('POST', '/reservations/{id}/release', await c.post(`/reservations/${released.id}/release`).expect(200));
    expectDocumented('POST', '/reservations/{id}/release', await c.post(`/reservations/${released.id}/release`).expect(409));
    expectDocumented(
      'POST',
      '/items/{id}/stock-adjustments',
      await c.post(`/items/${item.id}/stock-adjustments`, { delta: 1, reason: 'receipt', location_id: item.id }).expect(400),
    );
  });

  test('every event the requests wrote carries what its webhook documents', async () => {
    const c = app.client();
    const [first, second] = [await createLocation(c), await createLocation(c)];
    const item = await createItem(c, { location_id: first.id, min_stock: 2 });
    await receive(c, item.id, 3);
    await c.patch(`/items/${item.id}`, { location_id: second.id }).expect(200);
    await c.post(`/items/${item.id}/stock-adjustments`, { delta: -2, reason: 'sale' }).expect(201);
    await c.post(`/items/${item.id}/transfers`, { from_location_id: second.id, to_location_id: null, quantity: 1 }).expect(201);
    await receive(c, item.id, 5);
    const committed = await reserve(c, item.id, { quantity: 1, location_id: null });
    await c.post(`/reservations/${committed.id}/commit`).expect(200);
    const released = await reserve(c, item.id, { quantity: 1 });
    await c.post(`/reservations/${released.id}/release`).expect(200);
    const lapsed = await reserve(c, item.id, { quantity: 1 });
    await backdate(app.db, lapsed.id, 901);
    // The next write on the item releases the due reservation, with reservation.expired.
    await c.post(`/items/${item.id}/stock-adjustments`, { delta: 1, reason: 'receipt' }).expect(201);
    const rows = await app.db.outboxEvent.findMany({ where: { workspaceId: c.identity.workspaceId } });
    // Every event type the document lists was written, and none other.
    expect(new Set(rows.map((row) => row.type))).toEqual(new Set(Object.keys(document.webhooks ?? {})));
    for (const row of rows) {
      const body = { id: row.id, type: row.type, created_at: row.createdAt.toISOString(), workspace_id: row.workspaceId, data: row.data };
      expect(validator.webhookProblems(row.type, body)).toEqual([]);
    }
  });

  test('errors: 400 listing every problem, 409 sku taken, 404', async () => {
    const c = app.client();
    const item = await createItem(c);
    expectDocumented('POST', '/items', await c.post('/items', { name: '', quantity: 1 }).expect(400));
    expectDocumented('POST', '/items', await c.post('/items', { sku: item.sku, name: 'Copy' }).expect(409));
    expectDocumented('GET', '/items/{id}', await c.get('/items/6f1c2a4e-3b5d-4e7f-8a9b-0c1d2e3f4a5b').expect(404));
  });
});
