import type { Server } from 'node:http';
import request from 'supertest';
import { openApiValidator, serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import { eventsApiDocument } from './events.openapi';
import { startTestApp } from './test/app';

let app: Awaited<ReturnType<typeof startTestApp>>;
let server: Server;
const document = eventsApiDocument();
const validator = openApiValidator(document as never);

beforeAll(async () => {
  app = await startTestApp();
  server = app.server;
});
afterAll(async () => {
  await app.close();
});

function client(): ServiceClient {
  return serviceClient('events', server, testIdentity());
}

/** Asserts that a real answer is what the document says `METHOD path` answers with that status. */
function expectDocumented(method: string, path: string, res: { status: number; body: unknown }): void {
  expect(validator.responseProblems(method, path, res.status, res.body)).toEqual([]);
}

describe('the served document', () => {
  test('GET /openapi.json answers the document without a gateway signature', async () => {
    const res = await request(server).get('/openapi.json').expect(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual(JSON.parse(JSON.stringify(document)));
  });
});

describe('real answers match the documented schemas', () => {
  test('events, tickets, a validation and its 409', async () => {
    const c = client();
    const event = await c.post('/events', { name: 'Open Air', starts_at: '2025-06-01T18:00:00Z' }).expect(201);
    expectDocumented('POST', '/events', event);
    expectDocumented('GET', '/events/{id}', await c.get(`/events/${event.body.id}`).expect(200));

    const ticket = await c.post(`/events/${event.body.id}/tickets`, { holder_name: 'Ada', metadata: { seat: 'A-12' } }).expect(201);
    expectDocumented('POST', '/events/{id}/tickets', ticket);
    expectDocumented('GET', '/events/{id}/tickets', await c.get(`/events/${event.body.id}/tickets?limit=1`).expect(200));

    const validation = await c.post(`/tickets/${ticket.body.id}/validate`, { gate: 'north-1', event_id: event.body.id }).expect(200);
    expectDocumented('POST', '/tickets/{id}/validate', validation);
    expectDocumented('POST', '/tickets/{id}/validate', await c.post(`/tickets/${ticket.body.id}/validate`).expect(409));
    expectDocumented('GET', '/tickets/{id}', await c.get(`/tickets/${ticket.body.id}`).expect(200));
  });

  test('the ticket.validated event carries what its webhook documents', async () => {
    const c = client();
    const event = await c.post('/events', { name: 'Gala', starts_at: '2025-06-01T18:00:00Z' }).expect(201);
    const ticket = await c.post(`/events/${event.body.id}/tickets`, { metadata: { seat: 'B-2' } }).expect(201);
    await c.post(`/tickets/${ticket.body.id}/validate`, { gate: 'north-1' }).expect(200);
    const row = await app.db.outboxEvent.findFirstOrThrow({ where: { workspaceId: c.identity.workspaceId, type: 'ticket.validated' } });
    // As the outbox relay puts it on the delivery queue and the worker sends it.
    const body = { id: row.id, type: row.type, created_at: row.createdAt.toISOString(), workspace_id: row.workspaceId, data: row.data };
    expect(validator.webhookProblems('ticket.validated', body)).toEqual([]);
  });

  test('errors: 400 with every problem, 404', async () => {
    const c = client();
    expectDocumented('POST', '/events', await c.post('/events', { name: '', extra: 1 }).expect(400));
    expectDocumented('GET', '/tickets/{id}', await c.get('/tickets/6f1c2a4e-3b5d-4e7f-8a9b-0c1d2e3f4a5b').expect(404));
  });

  test('webhook endpoints and their deliveries', async () => {
    const c = client();
    const created = await c.post('/webhook-endpoints', { url: 'http://127.0.0.1:9/hook', events: ['ticket.validated'] }).expect(201);
    expectDocumented('POST', '/webhook-endpoints', created);
    expectDocumented('GET', '/webhook-endpoints', await c.get('/webhook-endpoints').expect(200));
    expectDocumented('PATCH', '/webhook-endpoints/{id}', await c.patch(`/webhook-endpoints/${created.body.id}`, { enabled: false }).expect(200));
    expectDocumented('GET', '/webhook-endpoints/{id}/deliveries', await c.get(`/webhook-endpoints/${created.body.id}/deliveries`).expect(200));
    expectDocumented('POST', '/webhook-endpoints/{id}/rotate-secret', await c.post(`/webhook-endpoints/${created.body.id}/rotate-secret`).expect(200));
    expectDocumented('DELETE', '/webhook-endpoints/{id}', await c.delete(`/webhook-endpoints/${created.body.id}`).expect(204));
  });
});
