import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from '@platform/gateway/dist/redis';
import { startPlatform, startRedisServer, type Platform, type RedisServer, waitFor, uniqueDatabaseName } from '@platform/testing';
import { call, direct, gateway, LOAD_KEY_RATE_LIMITS, startLoop, statusCounts, type Outcome } from './support/load';

// Redis (the platform's only one: rate limits, key revocations, the run queue, webhook queues) is
// killed under load and started again on the same port. It runs as a queue's Redis runs in
// production, with an append-only file fsynced on every write, so what it acknowledged survives.

const ENQUEUE_TIMEOUT_MS = 2_000;
let redis: RedisServer;
let platform: Platform;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'drill-redis-'));
  redis = await startRedisServer({ persistDir: dataDir });
  platform = await startPlatform({
    name: uniqueDatabaseName('drill_redis'),
    redisUrl: redis.url,
    processes: ['events', 'pipelines', 'worker', 'gateway'],
    env: {
      // The gateway's production Redis command timeout (the launcher's test value is 2 s): this drill is its fail-fast.
      REDIS_COMMAND_TIMEOUT_MS: String(DEFAULT_REDIS_COMMAND_TIMEOUT_MS),
      PIPELINES_ENQUEUE_TIMEOUT_MS: String(ENQUEUE_TIMEOUT_MS),
      PIPELINES_RUN_BACKOFF_MS: '200',
      WORKER_LOCK_DURATION_MS: '5000',
      WORKER_STALLED_INTERVAL_MS: '1000',
      // Runs whose job a Redis lost get it back after 2 s (production: 60 s, looked at every 30 s).
      WORKER_REQUEUE_AFTER_MS: '2000',
      WORKER_REQUEUE_INTERVAL_MS: '250',
    },
  });
}, 60_000);

afterAll(async () => {
  await platform?.stop();
  await redis?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function createPipelines(count: number): Promise<string[]> {
  const api = direct(platform, 'pipelines');
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await api.post('/pipelines', {
      name: `drill ${i}`,
      source: { connector: 'sample', config: { records: 50, seed: i } },
      destination: { connector: 'postgres', config: { table: 'drill_records' } },
    });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  return ids;
}

async function runStatus(pipelineId: string, runId: string): Promise<string> {
  const res = await direct(platform, 'pipelines').get(`/pipelines/${pipelineId}/runs/${runId}`);
  return res.body?.status;
}

test('Redis killed and restarted under load: every process stays ready, the gateway keeps answering 2xx, triggers get a fast 503, the worker resumes, no accepted run is lost', async () => {
  const event = await direct(platform, 'events').post('/events', { name: 'Drill', starts_at: new Date().toISOString() });
  expect(event.status).toBe(201);
  const pipelines = await createPipelines(30);
  // Separate keys, so neither loop meets the other's rate limit.
  const readerKey = await platform.createApiKey({ name: 'reader', rateLimits: LOAD_KEY_RATE_LIMITS });
  const triggerKey = await platform.createApiKey({ name: 'trigger', rateLimits: LOAD_KEY_RATE_LIMITS });
  const reader = gateway(platform, readerKey.token);
  const triggerer = gateway(platform, triggerKey.token);

  const reads = startLoop({
    concurrency: 2,
    pauseMs: 50,
    // Stopped once the drill has seen what it needs; these bounds are only a backstop.
    maxRequests: 2_000,
    maxMs: 120_000,
    request: () => reader.get(`/events/v0/events/${event.body.id}`, 5_000),
  });
  const accepted: { pipelineId: string; runId: string }[] = [];
  const triggers = startLoop({
    concurrency: 1,
    pauseMs: 120,
    maxRequests: 300,
    maxMs: 120_000,
    request: async (i) => {
      const pipelineId = pipelines[i % pipelines.length]!;
      const outcome = await triggerer.post(`/pipelines/v3/pipelines/${pipelineId}/runs`, { trigger: 'manual' }, 10_000);
      if (outcome.status === 202) accepted.push({ pipelineId, runId: outcome.body.id });
      return Object.assign(outcome, { pipelineId });
    },
  });

  await waitFor('reads and triggers served before the kill', () => reads.outcomes.length > 0 && accepted.length >= 5, 60_000, 100);
  const killedAt = Date.now();
  await redis.kill('SIGKILL');
  // Readiness follows the database only (contract section 12): with Redis gone every process still
  // serves, so it stays ready (in Kubernetes no pod leaves its Service) and shows Redis down.
  const readiness = await waitFor(
    'every process to show Redis down',
    async () => {
      const all = await Promise.all(platform.processes().map(async (p) => ({ name: p.name, ...(await call(`${p.url}/readyz`, { timeoutMs: 60_000 })) })));
      return all.every((r) => r.body?.checks?.redis === 'down') ? all : undefined;
    },
    60_000,
    100,
  );
  // Redis stays away until reads and triggers sent after the kill have been answered, a 503 among the triggers.
  const sentAfterKill = (loop: Outcome[]) => loop.filter((o) => o.at > killedAt + 200);
  await waitFor(
    'answers during the outage',
    () =>
      sentAfterKill(reads.outcomes).length > 10 &&
      sentAfterKill(triggers.outcomes).length > 5 &&
      sentAfterKill(triggers.outcomes).some((o) => o.status === 503),
    60_000,
    100,
  );
  await redis.restart();
  const restartedAt = Date.now();
  // The producer and the worker reconnect on their own: wait for a trigger that is accepted again.
  await waitFor(
    'triggers accepted after the restart',
    () => triggers.outcomes.some((o) => o.at > restartedAt && o.status === 202) && accepted.length > 10,
    60_000,
    100,
  );
  const readOutcomes = await reads.stop();
  const triggerOutcomes = await triggers.stop();

  // 1. The gateway answered every read, 2xx, throughout (in-memory limiter while Redis was away).
  expect(statusCounts(readOutcomes)).toEqual({ '200': readOutcomes.length });
  // Answered while Redis was away, not held until it came back.
  expect(readOutcomes.filter((o) => o.at > killedAt && o.at + o.ms <= restartedAt).length).toBeGreaterThan(10);

  // 2. Every process ready during the outage, Redis shown down.
  expect(readiness.map((r) => [r.name, r.status])).toEqual(platform.processes().map((p) => [p.name, 200]));
  for (const r of readiness) expect([r.name, r.body]).toEqual([r.name, { status: 'ready', checks: { database: 'ok', redis: 'down' } }]);

  // 3. Triggers during the outage: 503 temporarily_unavailable, answered while Redis was still away.
  const duringOutage = triggerOutcomes.filter((o) => o.at > killedAt + 200 && o.at + o.ms <= restartedAt);
  expect(duringOutage.length).toBeGreaterThan(5);
  for (const o of duringOutage) {
    expect([503, 409]).toContain(o.status);
    if (o.status === 503) expect(o.body.error.code).toBe('temporarily_unavailable');
  }
  expect(duringOutage.filter((o) => o.status === 503).length).toBeGreaterThan(0);
  expect(triggerOutcomes.every((o: Outcome) => o.status !== 0)).toBe(true);

  // 4-5. The worker resumed, and every run that got a 202 (before, during or after) ends succeeded.
  expect(accepted.length).toBeGreaterThan(10);
  const finals = await waitFor(
    'every accepted run to end',
    async () => {
      const statuses = await Promise.all(accepted.map((a) => runStatus(a.pipelineId, a.runId)));
      return statuses.every((s) => ['succeeded', 'failed', 'cancelled'].includes(s)) ? statuses : undefined;
    },
    120_000,
    250,
  );
  expect(finals.filter((s) => s !== 'succeeded')).toEqual([]);
}, 300_000);

test('a run whose job a Redis lost (restart without its data) gets its job back from the worker and succeeds; nothing acknowledged is lost', async () => {
  const [pipelineId] = await createPipelines(1);
  const api = direct(platform, 'pipelines');
  await platform.kill('worker', 'SIGTERM');
  const trigger = await api.post(`/pipelines/${pipelineId}/runs`, { trigger: 'manual' });
  expect(trigger.status).toBe(202);

  await redis.restart({ wipe: true });
  const wipedAt = Date.now();
  await platform.restart('worker');
  // The 202 was given after the job was added; the wipe lost the job, the worker re-adds it.
  await waitFor('the acknowledged run to succeed', async () => (await runStatus(pipelineId!, trigger.body.id)) === 'succeeded', 60_000, 200);
  process.stdout.write(`run re-queued and succeeded ${Date.now() - wipedAt} ms after the wipe\n`);
  const run = await api.get(`/pipelines/${pipelineId}/runs/${trigger.body.id}`);
  expect(run.body).toMatchObject({ status: 'succeeded', attempts: 1 });
  // The pipeline is free again.
  const again = await api.post(`/pipelines/${pipelineId}/runs`, { trigger: 'manual' });
  expect(again.status).toBe(202);
  await waitFor('the next run to succeed', async () => (await runStatus(pipelineId!, again.body.id)) === 'succeeded', 60_000, 200);
}, 180_000);
