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

test('a validated ticket is delivered as ticket.validated, signed, with the ticket as data', async () => {
  const c = serviceClient('events', app.server, testIdentity());
  const endpoint = await c.post('/webhook-endpoints', { url: app.receiver.url('/events-hook'), events: ['ticket.validated'] }).expect(201);
  expect(endpoint.body.secret).toMatch(/^whsec_/);
  const event = await c.post('/events', { name: 'Hooked', starts_at: '2025-06-01T18:00:00Z' }).expect(201);
  const ticket = await c.post(`/events/${event.body.id}/tickets`, {}).expect(201);
  await c.post(`/tickets/${ticket.body.id}/validate`, { gate: 'main' }).expect(200);

  const [delivery] = await waitFor('the delivery', () => app.receiver.at('/events-hook').length > 0 && app.receiver.at('/events-hook'));
  const verified = verifyWebhook(delivery!.body, delivery!.headers, endpoint.body.secret);
  const current = await c.get(`/tickets/${ticket.body.id}`).expect(200);
  expect(verified).toMatchObject({ type: 'ticket.validated', workspace_id: c.identity.workspaceId, data: current.body });
  expect(delivery!.headers['webhook-id']).toBe(verified.id);

  const deliveries = await waitFor('the delivery record', async () => {
    const res = await c.get(`/webhook-endpoints/${endpoint.body.id}/deliveries`).expect(200);
    return res.body.data.length > 0 && res.body.data;
  });
  expect(deliveries[0]).toMatchObject({ event_id: verified.id, event_type: 'ticket.validated', attempt: 1, status: 'succeeded', response_status: 204 });
});

test('webhook endpoints need the webhooks scopes', async () => {
  const c = serviceClient('events', app.server, testIdentity(['tickets:write']));
  const res = await c.post('/webhook-endpoints', { url: app.receiver.url('/x'), events: ['*'] }).expect(403);
  expect(res.body.error.required_scope).toBe('webhooks:write');
  await c.get('/webhook-endpoints').expect(403);
});

test(`GET ${INTERNAL_USAGE_PATH} answers the workspace's webhook endpoints in this service (the gateway's admin quotas)`, async () => {
  const c = serviceClient('events', app.server, testIdentity());
  await c.post('/webhook-endpoints', { url: app.receiver.url('/usage'), events: ['ticket.validated'] }).expect(201);
  await serviceClient('events', app.server, testIdentity())
    .post('/webhook-endpoints', { url: app.receiver.url('/usage'), events: ['*'] })
    .expect(201);
  expect((await c.get(INTERNAL_USAGE_PATH).expect(200)).body).toEqual({ webhook_endpoints: 1 });
});
