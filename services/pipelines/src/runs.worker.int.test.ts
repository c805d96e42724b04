import { queueKeyPrefix } from '@platform/core';
import { createServer, type Server as HttpServer } from 'node:http';
import { Queue } from 'bullmq';
import { expectErrorBody, redisKeys, testRedisUrl, waitFor, type ServiceClient } from '@platform/testing';
import { RUN_CANCELLED } from './runs.queue';
import { createPipeline, destinationRows, ended, getRun, runEvents, waitForRun } from './test/fixtures';
import { testQueue, type TestQueue } from './test/app';
import { appAndWorkerPerTest, spawnWorker } from './test/worker';

// Every test: its own workspace, its own queue, its own real worker process (node dist/worker.js).
const rig = appAndWorkerPerTest();
let queue: TestQueue;

function setup(workerEnv: Record<string, string> | null = {}): Promise<ServiceClient> {
  queue = testQueue('runs-worker');
  return rig.start(queue, workerEnv);
}

/** How the run's BullMQ job ended (it is kept: removeOnComplete/removeOnFail keep the recent ones). */
async function jobEnd(runId: string): Promise<{ state: string; reason: string | undefined }> {
  const runs = new Queue(queue.name, { connection: { url: testRedisUrl() }, prefix: queueKeyPrefix(queue.prefix, queue.name) });
  try {
    const state = await waitFor(
      'the job to end',
      async () => {
        const current = await runs.getJobState(runId);
        return current === 'completed' || current === 'failed' ? current : undefined;
      },
      60_000,
      100,
    );
    return { state, reason: (await runs.getJob(runId))?.failedReason };
  } finally {
    await runs.close();
  }
}

test('a run goes queued → running → succeeded, copies every record once and emits run.* events', async () => {
  const c = await setup();
  const pipeline = await createPipeline(c, {}, 95);
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  expect(trigger.body.status).toBe('queued');
  const run = await waitForRun(c, pipeline.id, trigger.body.id, ended, 'the run to end');
  expect(run).toMatchObject({ status: 'succeeded', attempts: 1, error: null, stats: { records_read: 95, records_written: 95 } });
  expect(Date.parse(run.started_at!)).toBeGreaterThanOrEqual(Date.parse(run.created_at));
  expect(Date.parse(run.finished_at!)).toBeGreaterThanOrEqual(Date.parse(run.started_at!));

  const rows = await destinationRows(c.identity.workspaceId, 'sample_records');
  expect(rows.total).toBe(95);
  expect(rows.distinct).toBe(95);
  expect(rows.ids).toContain('sample-7-1');
  expect(rows.ids).toContain('sample-7-95');

  const after = await c.get(`/pipelines/${pipeline.id}`).expect(200);
  expect(after.body.last_successful_run_at).toBe(run.started_at);

  const events = await runEvents(run.id);
  expect(events.map((e) => e.type)).toEqual(['run.queued', 'run.started', 'run.succeeded']);
  expect(events[2]!.data).toEqual(run);
});

test('since defaults to the started_at of the last succeeded run; an explicit since reads only newer records', async () => {
  const c = await setup();
  const pipeline = await createPipeline(c, {}, 100);
  const first = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  expect(first.body.since).toBeNull();
  const firstRun = await waitForRun(c, pipeline.id, first.body.id, ended, 'the first run to end');
  expect(firstRun.status).toBe('succeeded');

  // Sample records are all updated in 2024, before the first run started: nothing new.
  const second = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'schedule' }).expect(202);
  expect(second.body.since).toBe(firstRun.started_at);
  const secondRun = await waitForRun(c, pipeline.id, second.body.id, ended, 'the second run to end');
  expect(secondRun).toMatchObject({ status: 'succeeded', stats: { records_read: 0, records_written: 0 } });
  const pipelineAfter = (await c.get(`/pipelines/${pipeline.id}`).expect(200)).body;
  expect(pipelineAfter.last_successful_run_at).toBe(secondRun.started_at);

  // Record i is updated at 2024-01-01T00:00:00Z + i s: after 00:01:10.5 come records 71..100.
  const backfill = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'backfill', since: '2024-01-01T01:01:10.500+01:00' }).expect(202);
  expect(backfill.body.since).toBe('2024-01-01T00:01:10.500Z');
  const backfillRun = await waitForRun(c, pipeline.id, backfill.body.id, ended, 'the backfill to end');
  expect(backfillRun.stats).toEqual({ records_read: 30, records_written: 30 });
});

test('a dry run reads and validates, writes nothing and does not move last_successful_run_at', async () => {
  const c = await setup();
  const pipeline = await createPipeline(c, { destination: { connector: 'postgres', config: { table: 'dry_records' } } }, 40);
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual', dry_run: true }).expect(202);
  expect(trigger.body.dry_run).toBe(true);
  const run = await waitForRun(c, pipeline.id, trigger.body.id, ended, 'the dry run to end');
  expect(run).toMatchObject({ status: 'succeeded', dry_run: true, stats: { records_read: 40, records_written: 0 } });
  expect((await destinationRows(c.identity.workspaceId, 'dry_records')).total).toBe(0);
  expect((await c.get(`/pipelines/${pipeline.id}`).expect(200)).body.last_successful_run_at).toBeNull();
  // Nor is it the run a later run starts from.
  const next = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  expect(next.body.since).toBeNull();
});

test('cancelling a running run aborts the step in progress: not one batch is written after the cancel, and its job ends failed ("run cancelled")', async () => {
  // Steps of 10 records that each wait 5 s before writing: a cancel seen only between steps would
  // let the step in progress write its batch; announced, it stops that step.
  const c = await setup({ WORKER_STEP_DELAY_MS: '5000' });
  const pipeline = await createPipeline(c, {}, 200);
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  await waitForRun(c, pipeline.id, trigger.body.id, (r) => r.stats.records_written >= 10, 'the first step');
  const cancel = await c.post(`/pipelines/${pipeline.id}/runs/${trigger.body.id}/cancel`).expect(200);
  expect(cancel.body).toMatchObject({ id: trigger.body.id, status: 'cancelled', finished_at: expect.any(String) });
  const writtenAtCancel = cancel.body.stats.records_written as number;
  expect(writtenAtCancel).toBeLessThan(200);

  // Once the job has ended nothing more can be written: compare then.
  expect(await jobEnd(trigger.body.id)).toEqual({ state: 'failed', reason: RUN_CANCELLED });
  expect((await destinationRows(c.identity.workspaceId, 'sample_records')).total).toBe(writtenAtCancel);
  const run = await getRun(c, pipeline.id, trigger.body.id);
  expect(run).toMatchObject({ status: 'cancelled', stats: { records_written: writtenAtCancel } });
  expect(rig.worker!.output()).toMatch(/"outcome":"cancelled"/);

  const again = await c.post(`/pipelines/${pipeline.id}/runs/${trigger.body.id}/cancel`).expect(409);
  expectErrorBody(again.body, 'conflict');
  expect((await runEvents(run.id)).map((e) => e.type)).toEqual(['run.queued', 'run.started', 'run.cancelled']);
});

test('a run cancelled while queued: its job ends failed ("run cancelled") once a worker picks it up, and nothing is written', async () => {
  const c = await setup(null);
  const pipeline = await createPipeline(c, {}, 30);
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  await c.post(`/pipelines/${pipeline.id}/runs/${trigger.body.id}/cancel`).expect(200);
  rig.worker = spawnWorker(queue);
  await rig.worker.ready;
  expect(await jobEnd(trigger.body.id)).toEqual({ state: 'failed', reason: RUN_CANCELLED });
  expect((await destinationRows(c.identity.workspaceId, 'sample_records')).total).toBe(0);
  expect(await getRun(c, pipeline.id, trigger.body.id)).toMatchObject({ status: 'cancelled', started_at: null, attempts: 0 });
});

test('a test app and its worker leave no key of their queue prefix in Redis once closed', async () => {
  const c = await setup();
  const pipeline = await createPipeline(c, {}, 5);
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  expect(await jobEnd(trigger.body.id)).toEqual({ state: 'completed', reason: undefined });
  expect((await redisKeys(queue.prefix, testRedisUrl())).length).toBeGreaterThan(0);
  await rig.worker!.kill('SIGKILL');
  await rig.app!.close();
  rig.app = undefined;
  expect(await redisKeys(queue.prefix, testRedisUrl())).toEqual([]);
});

test('cancelling a succeeded run is 409 conflict', async () => {
  const c = await setup();
  const pipeline = await createPipeline(c, {}, 5);
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  await waitForRun(c, pipeline.id, trigger.body.id, (r) => r.status === 'succeeded', 'the run to succeed');
  const res = await c.post(`/pipelines/${pipeline.id}/runs/${trigger.body.id}/cancel`).expect(409);
  expect(expectErrorBody(res.body, 'conflict').message).toMatch(/ended/);
});

describe('http-json source', () => {
  let source: HttpServer;
  let base: string;
  let failures = 0;
  beforeAll(async () => {
    source = createServer((req, res) => {
      if (req.url === '/items') {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            data: {
              items: [
                { id: 1, name: 'one', updated_at: '2024-05-01T00:00:00Z' },
                { id: 'two', name: 'two', updated_at: '2024-06-01T00:00:00Z' },
                { id: 3, name: 'three' },
              ],
            },
          }),
        );
      } else if (req.url === '/broken') {
        failures++;
        res.statusCode = 500;
        res.end('{}');
      } else if (req.url === '/no-ids') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify([{ name: 'anonymous' }]));
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', () => resolve()));
    const address = source.address() as { port: number };
    base = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => source.close(() => resolve()));
  });

  test('records at records_path are copied, filtered by since when they carry updated_at', async () => {
    const c = await setup();
    const pipeline = await createPipeline(c, {
      source: { connector: 'http-json', config: { url: `${base}/items`, records_path: 'data.items' } },
      destination: { connector: 'postgres', config: { table: 'items' } },
    });
    const all = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
    expect((await waitForRun(c, pipeline.id, all.body.id, ended, 'the run')).stats).toEqual({ records_read: 3, records_written: 3 });
    expect((await destinationRows(c.identity.workspaceId, 'items')).ids).toEqual(['1', '3', 'two']);

    const since = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'backfill', since: '2024-05-15T00:00:00Z' }).expect(202);
    expect((await waitForRun(c, pipeline.id, since.body.id, ended, 'the run')).stats).toEqual({ records_read: 2, records_written: 2 });
  });

  test('a source that keeps failing is retried (3 attempts) and the run ends failed with its error', async () => {
    const c = await setup();
    const pipeline = await createPipeline(c, { source: { connector: 'http-json', config: { url: `${base}/broken` } } });
    failures = 0;
    const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
    const run = await waitForRun(c, pipeline.id, trigger.body.id, ended, 'the run to fail');
    expect(run).toMatchObject({ status: 'failed', attempts: 3, error: { code: 'source_error', message: expect.stringContaining('answered 500') } });
    expect(failures).toBe(3);
    expect((await runEvents(run.id)).map((e) => e.type)).toEqual(['run.queued', 'run.started', 'run.failed']);
  });

  test('a record without an id fails the run at once, without retries (invalid_record)', async () => {
    const c = await setup();
    const pipeline = await createPipeline(c, { source: { connector: 'http-json', config: { url: `${base}/no-ids` } } });
    const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
    const run = await waitForRun(c, pipeline.id, trigger.body.id, ended, 'the run to fail');
    expect(run).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'invalid_record' } });
  });
});
