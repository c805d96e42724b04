import { INTERNAL_USAGE_PATH } from '@platform/core';
import { serviceClient, testIdentity, waitFor, withReceiver, type ServiceTestApp, type WithReceiver } from '@platform/testing';
import { verifyWebhook } from '@platform/webhooks';
import type { Database } from './database';
import { startTestApp } from './test/app';

let app: WithReceiver<ServiceTestApp<Database>>;

beforeAll(async () => {
  app = await withReceiver(startTestApp({ webhooks: true }));
});
afterAll(() => app.close());

test('every item event type arrives signed, with the resource as the API returns it', async () => {
  const c = serviceClient('warehouse', app.server, testIdentity());
  const endpoint = await c.post('/webhook-endpoints', { url: app.receiver.url('/warehouse-hook'), events: ['*'] }).expect(201);
  const [a, b] = await Promise.all([
    c.post('/locations', { name: 'Aisle A', code: 'A' }).expect(201),
    c.post('/locations', { name: 'Aisle B', code: 'B' }).expect(201),
  ]);
  const created = await c.post('/items', { sku: `HOOK-${Date.now()}`, name: 'Bolt', min_stock: 5, location_id: a.body.id }).expect(201);
  const id = created.body.id;
  const received = await c.post(`/items/${id}/stock-adjustments`, { delta: 10, reason: 'receipt' }).expect(201);
  const moved = await c.patch(`/items/${id}`, { location_id: b.body.id }).expect(200);
  const sold = await c.post(`/items/${id}/stock-adjustments`, { delta: -6, reason: 'sale' }).expect(201);

  const expected = ['item.created', 'item.stock_adjusted', 'item.updated', 'item.location_changed', 'item.stock_adjusted', 'item.reorder_needed'];
  const deliveries = await waitFor('every event', () => app.receiver.at('/warehouse-hook').length >= expected.length && app.receiver.at('/warehouse-hook'));
  const events = deliveries.map((d) => verifyWebhook(d.body, d.headers, endpoint.body.secret));
  expect(events.map((e) => e.type).sort()).toEqual([...expected].sort());

  const byType = (type: string) => events.filter((e) => e.type === type).map((e) => e.data);
  expect(byType('item.created')).toEqual([created.body]);
  expect(byType('item.updated')).toEqual([moved.body]);
  expect(byType('item.stock_adjusted')).toEqual(expect.arrayContaining([received.body.adjustment, sold.body.adjustment]));
  expect(byType('item.reorder_needed')).toEqual([sold.body.item]);
  const movements = await c.get(`/items/${id}/movements`).expect(200);
  expect(byType('item.location_changed')).toEqual(movements.body.data);
});

test(`GET ${INTERNAL_USAGE_PATH} answers the workspace's webhook endpoints in this service (the gateway's admin quotas)`, async () => {
  const c = serviceClient('warehouse', app.server, testIdentity());
  await c.post('/webhook-endpoints', { url: app.receiver.url('/usage'), events: ['item.created'] }).expect(201);
  await serviceClient('warehouse', app.server, testIdentity())
    .post('/webhook-endpoints', { url: app.receiver.url('/usage'), events: ['*'] })
    .expect(201);
  expect((await c.get(INTERNAL_USAGE_PATH).expect(200)).body).toEqual({ webhook_endpoints: 1 });
});
