import { startPlatform, startReceiver, startRedisServer, type Platform, type Receiver, type RedisServer, waitFor, uniqueDatabaseName } from '@platform/testing';
import { direct, gateway, startLoop, statusCounts } from './support/load';

// Processes of the platform die under load (SIGKILL: no shutdown code runs) and come back.

let redis: RedisServer;
let platform: Platform;
let receiver: Receiver | undefined;

beforeAll(async () => {
  redis = await startRedisServer();
  platform = await startPlatform({
    name: uniqueDatabaseName('drill_processes'),
    redisUrl: redis.url,
    processes: [
      {
        kind: 'events',
        // Webhooks to a receiver on 127.0.0.1, retried within a second.
        env: {
          WEBHOOKS_ALLOW_PRIVATE: 'true',
          WEBHOOKS_RETRY_SCHEDULE_MS: '200,400,800',
          WEBHOOKS_TIMEOUT_MS: '2000',
          // An attempt in flight when the process is killed keeps its job locked this long (30 s by default).
          WEBHOOKS_LOCK_DURATION_MS: '2000',
          WEBHOOKS_STALLED_INTERVAL_MS: '500',
        },
      },
      'pipelines',
      {
        kind: 'worker',
        // Runs of many small steps (so a kill lands mid-run) and a short lock, so a dead worker's
        // job is noticed within seconds instead of 30 s.
        env: { WORKER_BATCH_SIZE: '10', WORKER_STEP_DELAY_MS: '30', WORKER_LOCK_DURATION_MS: '2000', WORKER_STALLED_INTERVAL_MS: '500' },
      },
      'gateway',
    ],
    env: { PIPELINES_RUN_BACKOFF_MS: '200' },
  });
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await platform?.stop();
  await redis?.stop();
});

test('the events service SIGKILLed under load: the gateway answers 503 temporarily_unavailable at once, and 200 again once it is back', async () => {
  const event = await direct(platform, 'events').post('/events', { name: 'Drill', starts_at: new Date().toISOString() });
  const key = await platform.createApiKey({ name: 'service kill' });
  const client = gateway(platform, key.token);
  const loop = startLoop({
    concurrency: 2,
    pauseMs: 50,
    // Stopped once the drill has seen what it needs; these bounds are only a backstop.
    maxRequests: 2_000,
    maxMs: 120_000,
    request: () => client.get(`/events/v0/events/${event.body.id}`, 5_000),
  });

  await waitFor('200s before the kill', () => loop.outcomes.some((o) => o.status === 200), 60_000, 100);
  const killedAt = Date.now();
  await platform.kill('events', 'SIGKILL');
  // Down until more than ten requests sent while it was have been answered.
  await waitFor('answers while events is down', () => loop.outcomes.filter((o) => o.at > killedAt + 100).length > 10, 60_000, 50);
  const restartAt = Date.now();
  await platform.restart('events');
  const backAt = Date.now();
  const firstBackAt = await waitFor('a 200 after the restart', () => loop.outcomes.find((o) => o.at > backAt && o.status === 200), 60_000, 100).then(
    (o) => o.at + o.ms,
  );
  await waitFor('requests sent after the first 200 again', () => loop.outcomes.filter((o) => o.at > firstBackAt).length > 5, 60_000, 100);
  const outcomes = await loop.stop();

  const counts = statusCounts(outcomes);
  expect(Object.keys(counts).sort()).toEqual(['200', '503']);
  const down = outcomes.filter((o) => o.at > killedAt + 100 && o.at + o.ms < restartAt);
  expect(down.length).toBeGreaterThan(10);
  for (const o of down) {
    expect(o.status).toBe(503);
    expect(o.body.error.code).toBe('temporarily_unavailable');
    expect(o.headers?.get('retry-after')).toBe('1');
  }
  // At once: each of those was answered while events was still down, none held until it came back.
  const recovered = outcomes.filter((o) => o.at > firstBackAt);
  expect(recovered.length).toBeGreaterThan(5);
  expect(recovered.every((o) => o.status === 200)).toBe(true);
}, 180_000);

test('the run worker SIGKILLed mid-run: every run finishes on retry (or ends failed); none stays running', async () => {
  const api = direct(platform, 'pipelines');
  const runs: { pipelineId: string; runId: string }[] = [];
  for (let i = 0; i < 3; i++) {
    const pipeline = await api.post('/pipelines', {
      name: `kill ${i}`,
      source: { connector: 'sample', config: { records: 200, seed: i } },
      destination: { connector: 'postgres', config: { table: 'drill_kill' } },
    });
    const run = await api.post(`/pipelines/${pipeline.body.id}/runs`, { trigger: 'manual' });
    expect(run.status).toBe(202);
    runs.push({ pipelineId: pipeline.body.id, runId: run.body.id });
  }
  const get = async ({ pipelineId, runId }: { pipelineId: string; runId: string }) => (await api.get(`/pipelines/${pipelineId}/runs/${runId}`)).body;
  await waitFor(
    'all three runs mid-way',
    async () => (await Promise.all(runs.map(get))).every((r) => r.status === 'running' && r.stats.records_written >= 20 && r.stats.records_written < 200),
    60_000,
    50,
  );
  await platform.kill('worker', 'SIGKILL');
  const orphans = await Promise.all(runs.map(get));
  expect(orphans.map((r) => r.status)).toEqual(['running', 'running', 'running']);

  await platform.restart('worker');
  const finals = await waitFor(
    'every run to end',
    async () => {
      const all = await Promise.all(runs.map(get));
      return all.every((r) => !['queued', 'running'].includes(r.status)) ? all : undefined;
    },
    60_000,
    200,
  );
  for (const run of finals) {
    expect(['succeeded', 'failed']).toContain(run.status);
    if (run.status === 'succeeded') expect(run).toMatchObject({ attempts: 2, stats: { records_read: 200, records_written: 200 } });
    else expect(run.error).not.toBeNull();
  }
}, 180_000);

test('the events service SIGKILLed right after committing changes (its webhook relay and delivery worker with it): every event is still delivered after the restart', async () => {
  receiver = await startReceiver();
  // The first delivery attempt is still waiting for its answer when the process dies (its job stays
  // locked until the lock expires), the second fails (a retry is pending in the queue), the rest succeed.
  receiver.answer('/hook', 'hang', 500, 204);
  const key = await platform.createApiKey({ name: 'webhooks' });
  const client = gateway(platform, key.token);
  const endpoint = await client.post('/events/v0/webhook-endpoints', { url: receiver.url('/hook'), events: ['ticket.validated'] });
  expect(endpoint.status).toBe(201);
  const events = direct(platform, 'events');
  const event = await events.post('/events', { name: 'Drill', starts_at: new Date().toISOString() });
  const tickets: string[] = [];
  for (let i = 0; i < 12; i++) tickets.push((await events.post(`/events/${event.body.id}/tickets`, { holder_name: `guest ${i}` })).body.id);

  for (const ticket of tickets) expect((await client.post(`/events/v0/tickets/${ticket}/validate`, { gate: 'north' })).status).toBe(200);
  await waitFor('the first delivery attempt in flight', () => receiver!.at('/hook').length > 0, 60_000, 10);
  await platform.kill('events', 'SIGKILL');
  const deliveredBeforeKill = new Set(receiver.at('/hook').map((r) => JSON.parse(r.body).data.id as string));

  await platform.restart('events');
  await waitFor(
    'a delivery of every ticket.validated event',
    () => {
      const delivered = new Set(receiver!.at('/hook').map((r) => JSON.parse(r.body).data.id as string));
      return tickets.every((t) => delivered.has(t));
    },
    60_000,
    100,
  );
  // At least once: one event id per ticket, the same id on every attempt.
  const byTicket = new Map<string, Set<string>>();
  for (const r of receiver.at('/hook')) {
    const body = JSON.parse(r.body) as { id: string; type: string; data: { id: string } };
    expect(body.type).toBe('ticket.validated');
    expect(r.headers['webhook-id']).toBe(body.id);
    if (!byTicket.has(body.data.id)) byTicket.set(body.data.id, new Set());
    byTicket.get(body.data.id)!.add(body.id);
  }
  expect([...byTicket.values()].every((ids) => ids.size === 1)).toBe(true);
  // The drill means something only if the kill left work behind.
  expect(deliveredBeforeKill.size).toBeLessThan(tickets.length);
}, 180_000);
