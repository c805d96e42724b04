import { randomUUID } from 'node:crypto';
import { serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import { startTestApp } from './test/app';

// GET /events/{id}/stats/series (decision 0016) on the real service and database.

let app: Awaited<ReturnType<typeof startTestApp>>;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

function client(scopes: readonly string[] | null = null): ServiceClient {
  return serviceClient('events', app.server, testIdentity(scopes));
}

async function eventWithTickets(c: ServiceClient, count: number): Promise<{ eventId: string; ticketIds: string[] }> {
  const event = await c.post('/events', { name: 'Series test', starts_at: '2024-06-01T18:00:00Z' }).expect(201);
  const ticketIds: string[] = [];
  for (let i = 0; i < count; i++) ticketIds.push((await c.post(`/events/${event.body.id}/tickets`, {}).expect(201)).body.id);
  return { eventId: event.body.id, ticketIds };
}

const zero = { validated: 0, unvalidated: 0, rejected_duplicates: 0 };

describe('GET /events/{id}/stats/series', () => {
  test('counts check-ins by action per hour of their `at`, in total and per gate; every gate of the range in every bucket, zeros included', async () => {
    const c = client();
    const { eventId, ticketIds } = await eventWithTickets(c, 3);
    const [a, b, d] = ticketIds;
    const scans = [
      { scan_id: 's1', ticket_id: a, scanned_at: '2024-06-01T18:05:00Z', gate: 'north-1' },
      { scan_id: 's2', ticket_id: b, scanned_at: '2024-06-01T18:40:00Z', gate: 'south-2' },
      { scan_id: 's3', ticket_id: d, scanned_at: '2024-06-01T20:10:00Z' },
      // Before the range (not counted, nor is its gate listed); the earliest scan of `a`, so it validates it.
      { scan_id: 's0', ticket_id: a, scanned_at: '2024-06-01T17:59:59.999Z', gate: 'west' },
    ];
    await c.post(`/events/${eventId}/scans`, { scans }).expect(200);
    // A duplicate of an earlier validation, uploaded later: refused, counted in its own bucket and gate.
    await c.post(`/events/${eventId}/scans`, { scans: [{ scan_id: 's4', ticket_id: d, scanned_at: '2024-06-01T20:15:00Z', gate: 'south-2' }] }).expect(200);

    const answer = await c.get(`/events/${eventId}/stats/series?from=2024-06-01T18:00:00Z&to=2024-06-01T21:00:00Z`).expect(200);
    expect(answer.body).toEqual({
      event_id: eventId,
      interval: 'hour',
      from: '2024-06-01T18:00:00.000Z',
      to: '2024-06-01T21:00:00.000Z',
      buckets: [
        {
          start: '2024-06-01T18:00:00.000Z',
          validated: 1,
          unvalidated: 0,
          rejected_duplicates: 1,
          // s0 (17:59:59.999) validated `a` first, so s1 at 18:05 is its refused duplicate.
          gates: [
            { gate: 'north-1', validated: 0, unvalidated: 0, rejected_duplicates: 1 },
            { gate: 'south-2', validated: 1, unvalidated: 0, rejected_duplicates: 0 },
            { gate: null, ...zero },
          ],
        },
        {
          start: '2024-06-01T19:00:00.000Z',
          ...zero,
          gates: [
            { gate: 'north-1', ...zero },
            { gate: 'south-2', ...zero },
            { gate: null, ...zero },
          ],
        },
        {
          start: '2024-06-01T20:00:00.000Z',
          validated: 1,
          unvalidated: 0,
          rejected_duplicates: 1,
          gates: [
            { gate: 'north-1', ...zero },
            { gate: 'south-2', validated: 0, unvalidated: 0, rejected_duplicates: 1 },
            { gate: null, validated: 1, unvalidated: 0, rejected_duplicates: 0 },
          ],
        },
      ],
    });
  });

  test('a reversal counts as unvalidated at the time of the request, under gate null; by default the last 24 hours, hourly', async () => {
    const c = client();
    const { eventId, ticketIds } = await eventWithTickets(c, 1);
    await c.post(`/tickets/${ticketIds[0]}/validate`, { gate: 'east' }).expect(200);
    await c.post(`/tickets/${ticketIds[0]}/unvalidate`, { reason: 'wrong ticket' }).expect(200);
    const answer = await c.get(`/events/${eventId}/stats/series`).expect(200);
    expect(answer.body.buckets).toHaveLength(24);
    // The two requests may straddle an hour: then they are in the last two buckets.
    const totals = answer.body.buckets.reduce(
      (sum: typeof zero, bucket: typeof zero) => ({
        validated: sum.validated + bucket.validated,
        unvalidated: sum.unvalidated + bucket.unvalidated,
        rejected_duplicates: sum.rejected_duplicates + bucket.rejected_duplicates,
      }),
      zero,
    );
    expect(totals).toEqual({ validated: 1, unvalidated: 1, rejected_duplicates: 0 });
    // A reversal names no gate: it counts under gate null.
    const gates = answer.body.buckets
      .flatMap((bucket: { gates: object[] }) => bucket.gates)
      .filter((gate: typeof zero) => gate.validated + gate.unvalidated > 0);
    expect(gates).toEqual([
      { gate: 'east', validated: 1, unvalidated: 0, rejected_duplicates: 0 },
      { gate: null, validated: 0, unvalidated: 1, rejected_duplicates: 0 },
    ]);
  });

  test('an event without check-ins has every bucket with zero counts and no gates; daily buckets are UTC days', async () => {
    const c = client();
    const { eventId } = await eventWithTickets(c, 0);
    const answer = await c.get(`/events/${eventId}/stats/series?interval=day&from=2024-06-01T12:00:00Z&to=2024-06-03T00:00:00Z`).expect(200);
    expect(answer.body.buckets).toEqual([
      { start: '2024-06-01T00:00:00.000Z', ...zero, gates: [] },
      { start: '2024-06-02T00:00:00.000Z', ...zero, gates: [] },
    ]);
  });

  test("another workspace's event is 404; a bad or too wide query is 400; it needs events:read", async () => {
    const c = client();
    const { eventId } = await eventWithTickets(c, 0);
    await client().get(`/events/${eventId}/stats/series`).expect(404);
    await c.get(`/events/${randomUUID()}/stats/series`).expect(404);
    const wide = await c.get(`/events/${eventId}/stats/series?interval=day&from=2024-01-01T00:00:00Z&to=2024-06-01T00:00:00Z`).expect(400);
    expect(wide.body.error.errors).toEqual([{ in: 'query', field: 'from', code: 'too_many_buckets', message: expect.any(String) }]);
    await c.get(`/events/${eventId}/stats/series?interval=minute`).expect(400);
    const forbidden = await client(['tickets:read']).get(`/events/${eventId}/stats/series`).expect(403);
    expect(forbidden.body.error.required_scope).toBe('events:read');
  });
});
