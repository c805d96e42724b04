import request from 'supertest';
import { ROUTES } from '@platform/core';
import { badInputRequests, routesCovered, runBadInput, serviceClient, testIdentity, type BadInputRequest, type ServiceClient } from '@platform/testing';
import { startTestApp } from './test/app';

let app: Awaited<ReturnType<typeof startTestApp>>;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

function send(c: ServiceClient, r: BadInputRequest) {
  const method = r.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete';
  return method === 'get' || method === 'delete' ? c[method](r.path) : c[method](r.path, r.body);
}

test('every route of the contract table, attacked with bad strings, dates, escapes and cursors: no 5xx, every refusal a contract 400', async () => {
  const c = serviceClient('events', app.server, testIdentity());
  const event = await c.post('/events', { name: 'Open Air', starts_at: '2025-06-01T18:00:00Z' }).expect(201);
  const ticket = await c.post(`/events/${event.body.id}/tickets`, { holder_name: 'Ada' }).expect(201);
  const endpoint = await c.post('/webhook-endpoints', { url: 'http://127.0.0.1:9/hook', events: ['*'] }).expect(201);
  const ids: Record<string, string> = { events: event.body.id, tickets: ticket.body.id, 'webhook-endpoints': endpoint.body.id };
  const document = (await request(app.server).get('/openapi.json').expect(200)).body;
  const requests = badInputRequests('events', document, { params: (route) => ids[route.split(' ')[1]!.split('/')[1]!] });
  expect(routesCovered(requests)).toEqual(Object.keys(ROUTES.events).sort());
  expect(await runBadInput(requests, (r) => send(c, r))).toEqual([]);
  // The event and ticket under attack took no bad value.
  const stored = JSON.stringify([(await c.get(`/events/${event.body.id}`)).body, (await c.get(`/tickets/${ticket.body.id}`)).body]);
  expect(stored).not.toMatch(/\\u0000|\\ud[89a-f]|\ufffd/i);
}, 120_000);
