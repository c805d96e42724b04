import { serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import { testApp, testSql } from './test/app';

const { pool, sql } = testSql();
const app = testApp(sql, { allowPrivate: true });

afterAll(async () => {
  await pool.end();
});

async function createEndpoint(c: ServiceClient): Promise<string> {
  return (await c.post('/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['*'] }).expect(201)).body.id;
}

/** Delivery records of the endpoint at the given instants, as the worker writes them. */
async function recordAt(workspaceId: string, endpointId: string, status: 'succeeded' | 'failed', ...instants: string[]): Promise<void> {
  for (const at of instants) {
    await sql.$executeRawUnsafe(
      `INSERT INTO "webhook_deliveries" ("workspace_id", "endpoint_id", "event_id", "event_type", "attempt", "status", "response_status", "error", "created_at")
       VALUES ($1::uuid, $2::uuid, 'evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W', 'ticket.validated', 1, $3::text, NULL, NULL, $4::timestamptz)`,
      workspaceId,
      endpointId,
      status,
      at,
    );
  }
}

const series = (c: ServiceClient, endpointId: string, query: string) => c.get(`/webhook-endpoints/${endpointId}/stats/series${query ? `?${query}` : ''}`);

describe('GET /webhook-endpoints/{id}/stats/series', () => {
  test('counts attempts by outcome per UTC hour, every bucket present with zeros, `to` exclusive', async () => {
    const c = serviceClient('events', app, testIdentity());
    const endpoint = await createEndpoint(c);
    const other = await createEndpoint(c);
    await recordAt(c.identity.workspaceId, endpoint, 'succeeded', '2024-12-01T08:00:00.000Z', '2024-12-01T08:59:59.999Z', '2024-12-01T10:30:00.000Z');
    await recordAt(c.identity.workspaceId, endpoint, 'failed', '2024-12-01T08:15:00.000Z', '2024-12-01T11:00:00.000Z', '2024-12-01T07:59:59.999Z');
    await recordAt(c.identity.workspaceId, other, 'succeeded', '2024-12-01T09:00:00.000Z');

    // `from` is rounded down and `to` up to the hour.
    const answer = await series(c, endpoint, 'from=2024-12-01T08:20:00Z&to=2024-12-01T10:40:00%2B00:00').expect(200);
    expect(answer.body).toEqual({
      endpoint_id: endpoint,
      interval: 'hour',
      from: '2024-12-01T08:00:00.000Z',
      to: '2024-12-01T11:00:00.000Z',
      buckets: [
        { start: '2024-12-01T08:00:00.000Z', succeeded: 2, failed: 1 },
        { start: '2024-12-01T09:00:00.000Z', succeeded: 0, failed: 0 },
        { start: '2024-12-01T10:00:00.000Z', succeeded: 1, failed: 0 },
      ],
    });
  });

  test('daily buckets are UTC days', async () => {
    const c = serviceClient('events', app, testIdentity());
    const endpoint = await createEndpoint(c);
    await recordAt(c.identity.workspaceId, endpoint, 'succeeded', '2024-12-01T23:59:59.999Z', '2024-12-02T00:00:00.000Z');
    await recordAt(c.identity.workspaceId, endpoint, 'failed', '2024-12-03T12:00:00.000Z');
    const answer = await series(c, endpoint, 'interval=day&from=2024-12-01T00:00:00Z&to=2024-12-04T00:00:00Z').expect(200);
    expect(answer.body.buckets).toEqual([
      { start: '2024-12-01T00:00:00.000Z', succeeded: 1, failed: 0 },
      { start: '2024-12-02T00:00:00.000Z', succeeded: 1, failed: 0 },
      { start: '2024-12-03T00:00:00.000Z', succeeded: 0, failed: 1 },
    ]);
  });

  test('by default the last 24 hours, hourly, the current hour last', async () => {
    const c = serviceClient('events', app, testIdentity());
    const endpoint = await createEndpoint(c);
    const before = Date.now();
    const answer = await series(c, endpoint, '').expect(200);
    const after = Date.now();
    const { buckets, from, to, interval } = answer.body as { buckets: { start: string }[]; from: string; to: string; interval: string };
    expect(interval).toBe('hour');
    expect(buckets).toHaveLength(24);
    expect(new Date(to).getTime() - new Date(from).getTime()).toBe(24 * 3_600_000);
    const last = new Date(buckets[23]!.start).getTime();
    expect(last).toBeLessThanOrEqual(after);
    expect(last + 3_600_000).toBeGreaterThan(before);
  });

  test('a range wider than 168 hours or 90 days, or empty, is 400 on the query; the widest allowed is 200', async () => {
    const c = serviceClient('events', app, testIdentity());
    const endpoint = await createEndpoint(c);
    const wide = await series(c, endpoint, 'from=2024-12-01T00:00:00Z&to=2024-12-08T00:00:01Z').expect(400);
    expect(wide.body.error.errors).toEqual([{ in: 'query', field: 'from', code: 'too_many_buckets', message: expect.any(String) }]);
    const widest = await series(c, endpoint, 'from=2024-12-01T00:00:00Z&to=2024-12-08T00:00:00Z').expect(200);
    expect(widest.body.buckets).toHaveLength(168);
    await series(c, endpoint, 'interval=day&from=2024-01-01T00:00:00Z&to=2024-03-31T00:00:01Z').expect(400);
    expect((await series(c, endpoint, 'interval=day&from=2024-01-01T00:00:00Z&to=2024-03-31T00:00:00Z').expect(200)).body.buckets).toHaveLength(90);
    const empty = await series(c, endpoint, 'from=2024-12-02T00:00:00Z&to=2024-12-01T00:00:00Z').expect(400);
    expect(empty.body.error.errors[0]).toMatchObject({ in: 'query', field: 'from', code: 'invalid_range' });
    const bad = await series(c, endpoint, 'interval=week&from=yesterday').expect(400);
    expect(bad.body.error.errors.map((e: { field: string }) => e.field).sort()).toEqual(['from', 'interval']);
    const edge = await series(c, endpoint, 'from=9999-12-31T20:00:00Z&to=9999-12-31T23:30:00Z').expect(400);
    expect(edge.body.error.errors[0]).toMatchObject({ in: 'query', field: 'to', code: 'out_of_range' });
  });

  test("another workspace's endpoint, or an unknown one, is 404", async () => {
    const c = serviceClient('events', app, testIdentity());
    const stranger = serviceClient('events', app, testIdentity());
    const endpoint = await createEndpoint(c);
    await series(stranger, endpoint, '').expect(404);
    await series(c, '1f0e2d3c-4b5a-4968-8776-a5b4c3d2e1f0', '').expect(404);
    await series(c, 'nope', '').expect(400);
  });
});
