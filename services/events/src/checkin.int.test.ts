import { randomUUID } from 'node:crypto';
import { expectErrorBody, serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import { startTestApp } from './test/app';

// Contract section 15 on the real service and database: lists, delta download, offline scans,
// undo, history and live figures.

let app: Awaited<ReturnType<typeof startTestApp>>;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

function client(scopes: readonly string[] | null = null): ServiceClient {
  return serviceClient('events', app.server, testIdentity(scopes));
}

async function eventWithTickets(c: ServiceClient, count: number): Promise<{ eventId: string; ticketIds: string[] }> {
  const event = await c.post('/events', { name: 'Gate test', starts_at: '2025-06-01T18:00:00Z' }).expect(201);
  const ticketIds: string[] = [];
  for (let i = 0; i < count; i++) ticketIds.push((await c.post(`/events/${event.body.id}/tickets`, { holder_name: `Holder ${i}` }).expect(201)).body.id);
  return { eventId: event.body.id, ticketIds };
}

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

function scan(scanId: string, ticketId: string, scannedAt: string, extra: { gate?: string | null; validator_id?: string | null } = {}) {
  return { scan_id: scanId, ticket_id: ticketId, scanned_at: scannedAt, ...extra };
}

async function checkins(c: ServiceClient, ticketId: string) {
  return (await c.get(`/tickets/${ticketId}/checkins?limit=100`).expect(200)).body.data as Record<string, unknown>[];
}

describe('GET /events', () => {
  test("lists the workspace's events oldest first, paged, and none of another workspace's", async () => {
    const c = client();
    const other = client();
    await other.post('/events', { name: 'Not yours', starts_at: '2025-06-01T18:00:00Z' }).expect(201);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await c.post('/events', { name: `Event ${i}`, starts_at: '2025-06-01T18:00:00Z' }).expect(201)).body.id);

    const first = await c.get('/events?limit=2').expect(200);
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2));
    expect(first.body.data[0]).toEqual({ id: ids[0], name: 'Event 0', starts_at: '2025-06-01T18:00:00.000Z', ends_at: null, created_at: expect.any(String) });
    const second = await c.get(`/events?limit=2&cursor=${first.body.next_cursor}`).expect(200);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[2] })], next_cursor: null });
  });

  test('needs events:read', async () => {
    const res = await client(['tickets:read']).get('/events').expect(403);
    expect(res.body.error.required_scope).toBe('events:read');
  });
});

describe('updated_at and updated_since', () => {
  test('a ticket starts with updated_at = created_at; a validation and a reversal move it, the history does not', async () => {
    const c = client();
    const { ticketIds } = await eventWithTickets(c, 1);
    const issued = (await c.get(`/tickets/${ticketIds[0]}`).expect(200)).body;
    expect(issued.updated_at).toBe(issued.created_at);

    await c.post(`/tickets/${ticketIds[0]}/validate`, {}).expect(200);
    const validated = (await c.get(`/tickets/${ticketIds[0]}`).expect(200)).body;
    expect(validated.updated_at > issued.updated_at).toBe(true);

    await c.post(`/tickets/${ticketIds[0]}/validate`, {}).expect(409);
    expect((await c.get(`/tickets/${ticketIds[0]}`).expect(200)).body.updated_at).toBe(validated.updated_at);

    await c.post(`/tickets/${ticketIds[0]}/unvalidate`, { reason: 'wrong ticket' }).expect(200);
    expect((await c.get(`/tickets/${ticketIds[0]}`).expect(200)).body.updated_at > validated.updated_at).toBe(true);
  });

  test('lists only the tickets changed after the instant, in (updated_at, id) order, paged in that order', async () => {
    const c = client();
    const { eventId, ticketIds } = await eventWithTickets(c, 5);
    const all = (await c.get(`/events/${eventId}/tickets?limit=100`).expect(200)).body.data as { updated_at: string }[];
    const since = all.map((t) => t.updated_at).sort()[4]!;

    // Changed in the order 3, 0, 4: the delta lists them in that order.
    for (const i of [3, 0, 4]) await c.post(`/tickets/${ticketIds[i]}/validate`, { gate: 'north-1' }).expect(200);
    const page1 = await c.get(`/events/${eventId}/tickets?updated_since=${since}&limit=2`).expect(200);
    expect(page1.body.data.map((t: { id: string }) => t.id)).toEqual([ticketIds[3], ticketIds[0]]);
    const page2 = await c.get(`/events/${eventId}/tickets?updated_since=${since}&limit=2&cursor=${page1.body.next_cursor}`).expect(200);
    expect(page2.body).toEqual({ data: [expect.objectContaining({ id: ticketIds[4], status: 'validated' })], next_cursor: null });

    const newest = page2.body.data[0].updated_at;
    expect((await c.get(`/events/${eventId}/tickets?updated_since=${newest}`).expect(200)).body.data).toEqual([]);
    // With the status filter too.
    const issuedOnly = await c.get(`/events/${eventId}/tickets?updated_since=2000-01-01T00:00:00Z&status=issued`).expect(200);
    expect(issuedOnly.body.data.map((t: { id: string }) => t.id).sort()).toEqual([ticketIds[1], ticketIds[2]].sort());
  });

  test('a newly issued ticket is in the delta; a malformed updated_since is 400 on the query', async () => {
    const c = client();
    const { eventId } = await eventWithTickets(c, 1);
    const since = new Date(Date.now() - 1_000).toISOString();
    const ticket = await c.post(`/events/${eventId}/tickets`, {}).expect(201);
    const delta = await c.get(`/events/${eventId}/tickets?updated_since=${since}`).expect(200);
    expect(delta.body.data.map((t: { id: string }) => t.id)).toContain(ticket.body.id);

    const bad = await c.get(`/events/${eventId}/tickets?updated_since=yesterday`).expect(400);
    expectErrorBody(bad.body, 'invalid_request');
    expect(bad.body.error.errors[0]).toMatchObject({ in: 'query', field: 'updated_since' });
  });
});

describe('POST /events/{id}/scans', () => {
  test('answers one result per scan in request order: validated, already_validated, not_found, wrong_event', async () => {
    const c = client();
    const { eventId, ticketIds } = await eventWithTickets(c, 2);
    const { ticketIds: otherEvent } = await eventWithTickets(c, 1);
    const { ticketIds: otherWorkspace } = await eventWithTickets(client(), 1);
    const validator = randomUUID();
    const at = minutesAgo(10);
    await c.post(`/tickets/${ticketIds[1]}/validate`, { gate: 'south-2' }).expect(200);
    const online = (await c.get(`/tickets/${ticketIds[1]}`).expect(200)).body;

    const res = await c
      .post(`/events/${eventId}/scans`, {
        scans: [
          scan('s-1', ticketIds[0]!, at, { gate: 'north-1', validator_id: validator }),
          scan('s-2', ticketIds[1]!, at),
          scan('s-3', otherWorkspace[0]!, at),
          scan('s-4', randomUUID(), at),
          scan('s-5', otherEvent[0]!, at),
        ],
      })
      .expect(200);
    expect(res.body).toEqual({
      results: [
        { scan_id: 's-1', ticket_id: ticketIds[0], status: 'validated', validated_at: at, validator_id: validator, gate: 'north-1' },
        { scan_id: 's-2', ticket_id: ticketIds[1], status: 'already_validated', validated_at: online.validated_at, validator_id: null, gate: 'south-2' },
        { scan_id: 's-3', ticket_id: otherWorkspace[0], status: 'not_found', validated_at: null, validator_id: null, gate: null },
        { scan_id: 's-4', ticket_id: expect.any(String), status: 'not_found', validated_at: null, validator_id: null, gate: null },
        { scan_id: 's-5', ticket_id: otherEvent[0], status: 'wrong_event', validated_at: null, validator_id: null, gate: null },
      ],
    });
    expect(await c.get(`/tickets/${ticketIds[0]}`).expect(200)).toMatchObject({
      body: { status: 'validated', validated_at: at, gate: 'north-1', validator_id: validator },
    });
    // The other workspace's and the other event's tickets are untouched.
    expect((await c.get(`/tickets/${otherEvent[0]}`).expect(200)).body.status).toBe('issued');
  });

  test('a retried upload gets the same bytes, changes nothing, and a later undo does not make a replay validate again', async () => {
    const c = client();
    const { eventId, ticketIds } = await eventWithTickets(c, 3);
    const body = { scans: ticketIds.map((id, i) => scan(`replay-${i}`, id, minutesAgo(5 - i), { gate: 'north-1' })) };
    const first = await c.post(`/events/${eventId}/scans`, body).expect(200);
    const outbox = () => app.db.outboxEvent.count({ where: { workspaceId: c.identity.workspaceId, type: 'ticket.validated' } });
    expect(await outbox()).toBe(3);

    const again = await c.post(`/events/${eventId}/scans`, body).expect(200);
    expect(again.text).toBe(first.text);
    await c.post(`/tickets/${ticketIds[0]}/unvalidate`, { reason: 'wrong ticket' }).expect(200);
    // The replay carries another ticket and gate: the recorded result stands, whatever it carries.
    const changed = { scans: [scan('replay-0', ticketIds[1]!, minutesAgo(1), { gate: 'east-9' }), ...body.scans.slice(1)] };
    const third = await c.post(`/events/${eventId}/scans`, changed).expect(200);
    expect(third.text).toBe(first.text);
    expect((await c.get(`/tickets/${ticketIds[0]}`).expect(200)).body.status).toBe('issued');
    expect(await outbox()).toBe(3);
    expect((await checkins(c, ticketIds[1]!)).length).toBe(1);
  });

  test('of the scans of one ticket in one upload the earliest scanned_at wins; a scan_id twice gets its first result', async () => {
    const c = client();
    const { eventId, ticketIds } = await eventWithTickets(c, 1);
    const [late, early, earliestSameTime] = [minutesAgo(1), minutesAgo(3), minutesAgo(3)];
    const res = await c
      .post(`/events/${eventId}/scans`, {
        scans: [
          scan('late', ticketIds[0]!, late, { gate: 'a' }),
          scan('early', ticketIds[0]!, early, { gate: 'b' }),
          scan('late', randomUUID(), late, { gate: 'c' }),
          scan('tie', ticketIds[0]!, earliestSameTime, { gate: 'd' }),
        ],
      })
      .expect(200);
    const [lateResult, earlyResult, lateAgain, tieResult] = res.body.results;
    expect(earlyResult).toMatchObject({ scan_id: 'early', status: 'validated', validated_at: early, gate: 'b' });
    expect(lateResult).toEqual({ scan_id: 'late', ticket_id: ticketIds[0], status: 'already_validated', validated_at: early, validator_id: null, gate: 'b' });
    expect(lateAgain).toEqual(lateResult);
    expect(tieResult).toMatchObject({ scan_id: 'tie', status: 'already_validated', gate: 'b' });

    const history = await checkins(c, ticketIds[0]!);
    expect(history.map((h) => [h.action, h.scan_id, h.gate, h.at])).toEqual([
      ['validated', 'early', 'b', early],
      ['rejected_duplicate', 'tie', 'd', earliestSameTime],
      ['rejected_duplicate', 'late', 'a', late],
    ]);
  });

  test('the body is validated whole: every problem at once, nothing recorded', async () => {
    const c = client();
    const { eventId, ticketIds } = await eventWithTickets(c, 1);
    const future = new Date(Date.now() + 10 * 60_000).toISOString();
    const res = await c
      .post(`/events/${eventId}/scans`, {
        scans: [
          scan('ok', ticketIds[0]!, minutesAgo(1)),
          scan('bad id with spaces', ticketIds[0]!, minutesAgo(1)),
          scan('x'.repeat(65), 'not-a-uuid', minutesAgo(1)),
          scan('future', ticketIds[0]!, future),
          { ...scan('gate', ticketIds[0]!, minutesAgo(1)), gate: 'North 1', extra: true },
        ],
      })
      .expect(400);
    expectErrorBody(res.body, 'invalid_request');
    const fields = res.body.error.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(
      expect.arrayContaining(['scans.1.scan_id', 'scans.2.scan_id', 'scans.2.ticket_id', 'scans.3.scanned_at', 'scans.4.gate', 'scans.4.extra']),
    );
    expect(res.body.error.errors.find((e: { field: string }) => e.field === 'scans.3.scanned_at')).toMatchObject({ in: 'body', code: 'invalid_range' });
    expect((await c.get(`/tickets/${ticketIds[0]}`).expect(200)).body.status).toBe('issued');

    expect((await c.post(`/events/${eventId}/scans`, { scans: [] }).expect(400)).body.error.errors[0].field).toBe('scans');
    const tooMany = { scans: Array.from({ length: 501 }, (_, i) => scan(`s${i}`, ticketIds[0]!, minutesAgo(1))) };
    expect((await c.post(`/events/${eventId}/scans`, tooMany).expect(400)).body.error.errors[0].field).toBe('scans');
  });

  test("another workspace's event is 404, and its scan ids are its own", async () => {
    const a = client();
    const b = client();
    const { eventId } = await eventWithTickets(b, 1);
    expectErrorBody((await a.post(`/events/${eventId}/scans`, { scans: [scan('x', randomUUID(), minutesAgo(1))] }).expect(404)).body, 'not_found');
    expect((await a.post(`/events/${randomUUID()}/scans`, { scans: [scan('x', randomUUID(), minutesAgo(1))] })).status).toBe(404);
  });

  test('the same scan_id at two events is two scans', async () => {
    const c = client();
    const one = await eventWithTickets(c, 1);
    const two = await eventWithTickets(c, 1);
    const at = minutesAgo(2);
    const first = await c.post(`/events/${one.eventId}/scans`, { scans: [scan('gate-1-0001', one.ticketIds[0]!, at)] }).expect(200);
    const second = await c.post(`/events/${two.eventId}/scans`, { scans: [scan('gate-1-0001', two.ticketIds[0]!, at)] }).expect(200);
    expect([first.body.results[0].status, second.body.results[0].status]).toEqual(['validated', 'validated']);
  });

  test('needs tickets:write', async () => {
    const c = client(['events:read', 'events:write']);
    const { eventId } = await eventWithTickets(client(), 0);
    expect((await c.post(`/events/${eventId}/scans`, { scans: [scan('x', randomUUID(), minutesAgo(1))] }).expect(403)).body.error.required_scope).toBe(
      'tickets:write',
    );
  });
});

describe('POST /tickets/{id}/unvalidate', () => {
  test('the ticket is issued again with null validation fields, can be validated again, and each step is in the outbox', async () => {
    const c = client();
    const { ticketIds } = await eventWithTickets(c, 1);
    const id = ticketIds[0]!;
    await c.post(`/tickets/${id}/validate`, { gate: 'north-1' }).expect(200);
    const undone = await c.post(`/tickets/${id}/unvalidate`, { reason: 'Scanned the wrong ticket' }).expect(200);
    expect(undone.body).toMatchObject({ id, status: 'issued', validated_at: null, validator_id: null, gate: null });
    expect((await c.get(`/tickets/${id}`).expect(200)).body).toEqual(undone.body);

    const revalidated = await c.post(`/tickets/${id}/validate`, { gate: 'south-2' }).expect(200);
    expect(revalidated.body).toMatchObject({ status: 'validated', gate: 'south-2' });

    const events = await app.db.outboxEvent.findMany({ where: { workspaceId: c.identity.workspaceId }, orderBy: { id: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['ticket.validated', 'ticket.unvalidated', 'ticket.validated']);
    expect(events[1]!.data).toEqual({ ...undone.body, reason: 'Scanned the wrong ticket' });
  });

  test('a ticket that is not validated is 409 not_validated; an unknown one 404; the reason is required', async () => {
    const c = client();
    const { ticketIds } = await eventWithTickets(c, 1);
    const res = await c.post(`/tickets/${ticketIds[0]}/unvalidate`, { reason: 'nothing to undo' }).expect(409);
    expectErrorBody(res.body, 'conflict');
    expect(res.body.error.errors[0]).toMatchObject({ code: 'not_validated' });
    expectErrorBody((await c.post(`/tickets/${randomUUID()}/unvalidate`, { reason: 'x' }).expect(404)).body, 'not_found');
    expect((await c.post(`/tickets/${ticketIds[0]}/unvalidate`, {}).expect(400)).body.error.errors[0]).toMatchObject({ field: 'reason', code: 'required' });
    expect((await c.post(`/tickets/${ticketIds[0]}/unvalidate`, { reason: '' }).expect(400)).body.error.errors[0].field).toBe('reason');
    expect((await c.post(`/tickets/${ticketIds[0]}/unvalidate`, { reason: 'x'.repeat(501) }).expect(400)).body.error.errors[0].field).toBe('reason');
  });

  test('two concurrent undos of one validation: one 200, one 409', async () => {
    const c = client();
    const { ticketIds } = await eventWithTickets(c, 1);
    await c.post(`/tickets/${ticketIds[0]}/validate`, {}).expect(200);
    const answers = await Promise.all([0, 1].map(() => c.post(`/tickets/${ticketIds[0]}/unvalidate`, { reason: 'twice' })));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
  });
});

describe('GET /tickets/{id}/checkins', () => {
  test('every validation, reversal and refused duplicate, oldest first, with gate, validator and scan id', async () => {
    const c = client();
    const { eventId, ticketIds } = await eventWithTickets(c, 1);
    const id = ticketIds[0]!;
    const validator = randomUUID();
    await c.post(`/tickets/${id}/validate`, { gate: 'north-1', validator_id: validator }).expect(200);
    await c.post(`/tickets/${id}/validate`, { gate: 'south-2' }).expect(409);
    await c.post(`/tickets/${id}/unvalidate`, { reason: 'wrong ticket' }).expect(200);
    const scannedAt = new Date(Date.now() + 60_000).toISOString();
    await c.post(`/events/${eventId}/scans`, { scans: [scan('later', id, scannedAt, { gate: 'east-3' })] }).expect(200);

    const history = await checkins(c, id);
    expect(history).toEqual([
      {
        id: expect.any(String),
        ticket_id: id,
        action: 'validated',
        at: expect.any(String),
        gate: 'north-1',
        validator_id: validator,
        scan_id: null,
        reason: null,
      },
      {
        id: expect.any(String),
        ticket_id: id,
        action: 'rejected_duplicate',
        at: expect.any(String),
        gate: 'south-2',
        validator_id: null,
        scan_id: null,
        reason: null,
      },
      {
        id: expect.any(String),
        ticket_id: id,
        action: 'unvalidated',
        at: expect.any(String),
        gate: null,
        validator_id: null,
        scan_id: null,
        reason: 'wrong ticket',
      },
      { id: expect.any(String), ticket_id: id, action: 'validated', at: scannedAt, gate: 'east-3', validator_id: null, scan_id: 'later', reason: null },
    ]);
    const page = await c.get(`/tickets/${id}/checkins?limit=3`).expect(200);
    const rest = await c.get(`/tickets/${id}/checkins?limit=3&cursor=${page.body.next_cursor}`).expect(200);
    expect([...page.body.data, ...rest.body.data]).toEqual(history);
  });

  test("another workspace's ticket is 404", async () => {
    const { ticketIds } = await eventWithTickets(client(), 1);
    expectErrorBody((await client().get(`/tickets/${ticketIds[0]}/checkins`).expect(404)).body, 'not_found');
  });
});

describe('GET /events/{id}/stats', () => {
  test('totals, validations per gate (no gate as null), refused duplicates; an undo takes its validation away', async () => {
    const c = client();
    const { eventId, ticketIds } = await eventWithTickets(c, 6);
    const empty = await c.get(`/events/${eventId}/stats`).expect(200);
    expect(empty.body).toEqual({
      event_id: eventId,
      tickets: { total: 6, issued: 6, validated: 0 },
      gates: [],
      rejected_duplicates: 0,
      as_of: expect.any(String),
    });

    await c.post(`/tickets/${ticketIds[0]}/validate`, { gate: 'north-1' }).expect(200);
    await c.post(`/tickets/${ticketIds[1]}/validate`, { gate: 'north-1' }).expect(200);
    await c.post(`/tickets/${ticketIds[2]}/validate`, {}).expect(200);
    await c.post(`/tickets/${ticketIds[0]}/validate`, { gate: 'south-2' }).expect(409);
    await c
      .post(`/events/${eventId}/scans`, {
        scans: [scan('a', ticketIds[3]!, minutesAgo(2), { gate: 'east-3' }), scan('b', ticketIds[3]!, minutesAgo(1), { gate: 'east-3' })],
      })
      .expect(200);
    await c.post(`/tickets/${ticketIds[1]}/unvalidate`, { reason: 'oops' }).expect(200);

    const stats = await c.get(`/events/${eventId}/stats`).expect(200);
    expect(stats.body).toEqual({
      event_id: eventId,
      tickets: { total: 6, issued: 3, validated: 3 },
      gates: [
        { gate: 'east-3', validated: 1 },
        { gate: 'north-1', validated: 1 },
        { gate: null, validated: 1 },
      ],
      rejected_duplicates: 2,
      as_of: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Date.parse(stats.body.as_of)).toBeGreaterThanOrEqual(Date.parse(empty.body.as_of));
  });

  test("another workspace's event is 404; needs events:read", async () => {
    const { eventId } = await eventWithTickets(client(), 0);
    expectErrorBody((await client().get(`/events/${eventId}/stats`).expect(404)).body, 'not_found');
    expect((await client(['tickets:read']).get(`/events/${eventId}/stats`).expect(403)).body.error.required_scope).toBe('events:read');
  });
});
