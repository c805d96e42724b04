import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { expectErrorBody, serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import { startTestApp } from './test/app';

let app: Awaited<ReturnType<typeof startTestApp>>;
let server: Server;

beforeAll(async () => {
  app = await startTestApp();
  server = app.server;
});
afterAll(async () => {
  await app.close();
});

function client(scopes: readonly string[] | null = null): ServiceClient {
  return serviceClient('events', server, testIdentity(scopes));
}

async function eventWithTicket(c: ServiceClient): Promise<{ eventId: string; ticketId: string }> {
  const event = await c.post('/events', { name: 'Open Air', starts_at: '2025-06-01T18:00:00Z' }).expect(201);
  const ticket = await c.post(`/events/${event.body.id}/tickets`, { holder_name: 'Ada' }).expect(201);
  return { eventId: event.body.id, ticketId: ticket.body.id };
}

describe('gateway signature', () => {
  test('a request without the gateway signature is refused with 401', async () => {
    const res = await request(server).post('/events').send({ name: 'x', starts_at: '2025-06-01T18:00:00Z' });
    expect(res.status).toBe(401);
    expectErrorBody(res.body, 'unauthorized');
  });

  test('a signature made with another secret is refused', async () => {
    const c = serviceClient('events', server, testIdentity(), 'another-secret-0123456789abcdef');
    expect((await c.get(`/events/${randomUUID()}`)).status).toBe(401);
  });

  test('a signature for another path is refused', async () => {
    const c = client();
    const { eventId } = await eventWithTicket(c);
    const headers = (await import('@platform/testing')).gatewayHeaders('events', c.identity, 'GET', '/events/other');
    const res = await request(server).get(`/events/${eventId}`).set(headers);
    expect(res.status).toBe(401);
  });

  test('health is answered without a signature', async () => {
    await request(server).get('/healthz').expect(200);
    await request(server).get('/readyz').expect(200);
  });
});

describe('events and tickets', () => {
  test('an event is created and read back with RFC 3339 millisecond timestamps', async () => {
    const c = client();
    const created = await c.post('/events', { name: 'Gala', starts_at: '2025-06-01T20:00:00+02:00' }).expect(201);
    expect(created.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Gala',
      starts_at: '2025-06-01T18:00:00.000Z',
      ends_at: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const read = await c.get(`/events/${created.body.id}`).expect(200);
    expect(read.body).toEqual(created.body);
  });

  test('another workspace cannot see the event or its tickets (404)', async () => {
    const { eventId, ticketId } = await eventWithTicket(client());
    const stranger = client();
    expectErrorBody((await stranger.get(`/events/${eventId}`).expect(404)).body, 'not_found');
    await stranger.get(`/tickets/${ticketId}`).expect(404);
    await stranger.post(`/tickets/${ticketId}/validate`).expect(404);
  });

  test('tickets are listed with a status filter and cursor pagination', async () => {
    const c = client();
    const { eventId, ticketId } = await eventWithTicket(c);
    for (let i = 0; i < 4; i++) await c.post(`/events/${eventId}/tickets`).expect(201);
    await c.post(`/tickets/${ticketId}/validate`).expect(200);
    const page1 = await c.get(`/events/${eventId}/tickets?limit=2`).expect(200);
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.next_cursor).toEqual(expect.any(String));
    const page2 = await c.get(`/events/${eventId}/tickets?limit=2&cursor=${page1.body.next_cursor}`).expect(200);
    const page3 = await c.get(`/events/${eventId}/tickets?limit=2&cursor=${page2.body.next_cursor}`).expect(200);
    expect(page3.body.next_cursor).toBeNull();
    const ids = [...page1.body.data, ...page2.body.data, ...page3.body.data].map((t: { id: string }) => t.id);
    expect(new Set(ids).size).toBe(5);
    const validated = await c.get(`/events/${eventId}/tickets?status=validated`).expect(200);
    expect(validated.body.data.map((t: { id: string }) => t.id)).toEqual([ticketId]);
    const bad = await c.get(`/events/${eventId}/tickets?limit=0&status=lost`).expect(400);
    expect(expectErrorBody(bad.body, 'invalid_request').errors?.map((e) => [e.in, e.field])).toEqual([
      ['query', 'limit'],
      ['query', 'status'],
    ]);
  });

  test('a token without the scope gets 403 naming it', async () => {
    const c = client(['events:read']);
    const res = await c.post('/events', { name: 'x', starts_at: '2025-06-01T18:00:00Z' }).expect(403);
    expect(expectErrorBody(res.body, 'forbidden_scope').required_scope).toBe('events:write');
  });
});

describe('POST /tickets/{id}/validate', () => {
  test('the first scan validates: 200 with status, timestamp, gate and validator', async () => {
    const c = client();
    const { eventId, ticketId } = await eventWithTicket(c);
    const validatorId = randomUUID();
    const res = await c.post(`/tickets/${ticketId}/validate`, { gate: 'north-2', validator_id: validatorId, event_id: eventId }).expect(200);
    expect(res.body).toEqual({
      ticket_id: ticketId,
      event_id: eventId,
      status: 'validated',
      validated_at: expect.stringMatching(/Z$/),
      gate: 'north-2',
      validator_id: validatorId,
    });
    const ticket = await c.get(`/tickets/${ticketId}`).expect(200);
    expect(ticket.body).toMatchObject({ status: 'validated', validated_at: res.body.validated_at, gate: 'north-2', validator_id: validatorId });
  });

  test('a validation writes one ticket.validated outbox event whose data is the ticket as the API shows it', async () => {
    const c = client();
    const { ticketId } = await eventWithTicket(c);
    await c.post(`/tickets/${ticketId}/validate`, { gate: 'south' }).expect(200);
    const ticket = await c.get(`/tickets/${ticketId}`).expect(200);
    const events = await app.db.outboxEvent.findMany({ where: { workspaceId: c.identity.workspaceId } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'ticket.validated', data: ticket.body });
    expect(events[0]!.id).toMatch(/^evt_[0-9A-Z]{26}$/);
  });

  test('a second scan gets 409 carrying the original validation', async () => {
    const c = client();
    const { ticketId } = await eventWithTicket(c);
    const first = await c.post(`/tickets/${ticketId}/validate`, { gate: 'east' }).expect(200);
    const second = await c.post(`/tickets/${ticketId}/validate`, { gate: 'west', validator_id: randomUUID() }).expect(409);
    const error = expectErrorBody(second.body, 'conflict');
    expect(error).toMatchObject({ ticket_id: ticketId, validated_at: first.body.validated_at, validator_id: null, gate: 'east' });
  });

  test('50 concurrent scans of one ticket give exactly one 200', async () => {
    const c = client();
    const { ticketId } = await eventWithTicket(c);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => c.post(`/tickets/${ticketId}/validate`, { gate: `gate-${i}` })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    const winner = results.find((r) => r.status === 200)!;
    const events = await app.db.outboxEvent.findMany({ where: { workspaceId: c.identity.workspaceId, type: 'ticket.validated' } });
    expect(events).toHaveLength(1);
    for (const loser of results.filter((r) => r.status === 409)) {
      expect(loser.body.error.gate).toBe(winner.body.gate);
      expect(loser.body.error.validated_at).toBe(winner.body.validated_at);
    }
  });

  test('a ticket scanned at another event gets 400 wrong_event and stays valid', async () => {
    const c = client();
    const { ticketId, eventId } = await eventWithTicket(c);
    const other = await c.post('/events', { name: 'Other', starts_at: '2025-06-02T18:00:00Z' }).expect(201);
    const res = await c.post(`/tickets/${ticketId}/validate`, { event_id: other.body.id }).expect(400);
    expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([{ in: 'body', field: 'event_id', code: 'wrong_event', message: expect.any(String) }]);
    await c.post(`/tickets/${ticketId}/validate`, { event_id: randomUUID() }).expect(400);
    await c.post(`/tickets/${ticketId}/validate`, { event_id: eventId }).expect(200);
  });

  test('an unknown ticket is 404', async () => {
    expectErrorBody((await client().post(`/tickets/${randomUUID()}/validate`).expect(404)).body, 'not_found');
  });

  test('an empty body counts as {}', async () => {
    const c = client();
    const { ticketId } = await eventWithTicket(c);
    const res = await c.post(`/tickets/${ticketId}/validate`).expect(200);
    expect(res.body.gate).toBeNull();
  });

  test.each([
    ['a path id that is not a UUID', 'not-a-uuid', {}, [['path', 'id', 'invalid_format']]],
    ['a gate that is not a slug', null, { gate: 'North Gate' }, [['body', 'gate', 'invalid_format']]],
    ['a gate over 64 characters', null, { gate: 'a'.repeat(65) }, [['body', 'gate', 'too_long']]],
    ['a validator_id that is not a UUID', null, { validator_id: 42 }, [['body', 'validator_id', 'invalid_type']]],
    ['an unknown field', null, { gates: 'x' }, [['body', 'gates', 'unknown_field']]],
    [
      'every problem at once',
      null,
      { gate: 'A B', validator_id: 'x', extra: 1 },
      [
        ['body', 'extra', 'unknown_field'],
        ['body', 'gate', 'invalid_format'],
        ['body', 'validator_id', 'invalid_format'],
      ],
    ],
  ])('%s gives 400 listing each problem', async (_name, pathId, body, expected) => {
    const c = client();
    const { ticketId } = await eventWithTicket(c);
    const res = await c.post(`/tickets/${pathId ?? ticketId}/validate`, body).expect(400);
    const errors = expectErrorBody(res.body, 'invalid_request').errors!;
    expect(errors.map((e) => [e.in, e.field, e.code]).sort()).toEqual([...expected].sort());
  });

  test.each([
    ['malformed JSON', '{"gate": ', 'application/json'],
    ['a JSON array', '[1,2]', 'application/json'],
    ['JSON null', 'null', 'application/json'],
    ['text/plain', 'gate=north', 'text/plain'],
  ])('%s is a 400, never a 5xx', async (_name, raw, type) => {
    const c = client();
    const { ticketId } = await eventWithTicket(c);
    const res = await c.post(`/tickets/${ticketId}/validate`, raw, { 'content-type': type });
    expect(res.status).toBe(400);
    expectErrorBody(res.body, 'invalid_request');
  });

  test('a body over 1 MiB is 401: its signature cannot be verified (the gateway answers 413 before)', async () => {
    const c = client();
    const res = await c.post(`/events`, { name: 'x'.repeat(1024 * 1024 + 10), starts_at: '2025-06-01T18:00:00Z' });
    expect(res.status).toBe(401);
    expectErrorBody(res.body, 'unauthorized');
  });
});
