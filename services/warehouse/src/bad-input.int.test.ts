import request from 'supertest';
import { ROUTES } from '@platform/core';
import { badInputRequests, routesCovered, runBadInput, type BadInputRequest, type ServiceClient } from '@platform/testing';
import { createItem, createLocation, receive, reserve, useTestApp } from './test/warehouse';

const app = useTestApp();

function send(c: ServiceClient, r: BadInputRequest) {
  const method = r.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete';
  return method === 'get' || method === 'delete' ? c[method](r.path) : c[method](r.path, r.body);
}

test('every route of the contract table, attacked with bad strings, dates, escapes and cursors: no 5xx, every refusal a contract 400', async () => {
  const c = app.client();
  const item = await createItem(c);
  const location = await createLocation(c);
  await receive(c, item.id, 1_000);
  const reservation = await reserve(c, item.id, { quantity: 1 });
  const endpoint = await c.post('/webhook-endpoints', { url: 'http://127.0.0.1:9/hook', events: ['*'] }).expect(201);
  const document = (await request(app.server).get('/openapi.json').expect(200)).body;
  const ids: [string, string][] = [
    ['/items/:id', item.id],
    ['/locations/:id', location.id],
    ['/reservations/:id', reservation.id],
    ['/webhook-endpoints/:id', endpoint.body.id],
  ];
  const requests = badInputRequests('warehouse', document, {
    params: (route) => ids.find(([prefix]) => route.includes(prefix))?.[1],
    entries: { 'POST /items/bulk': 'items' },
  });
  expect(routesCovered(requests)).toEqual(Object.keys(ROUTES.warehouse).sort());
  expect(await runBadInput(requests, (r) => send(c, r))).toEqual([]);
  // The item under attack took no bad value.
  const stored = (await c.get(`/items/${item.id}`).expect(200)).body;
  expect(JSON.stringify(stored)).not.toMatch(/\\u0000|\\ud[89a-f]|\ufffd/i);
}, 120_000);
