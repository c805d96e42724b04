import { createServer, type Server as HttpServer } from 'node:http';
import { queueKeyPrefix } from '@platform/core';
import { Queue } from 'bullmq';
import { expectErrorBody, serviceClient, testIdentity, testRedisUrl, waitFor, type ServiceClient } from '@platform/testing';
import { maxProgressLines } from './run-logs';
import { createPipeline, ended, waitForRun } from './test/fixtures';
import { testQueue, type TestQueue } from './test/app';
import { appAndWorkerPerTest } from './test/worker';

// Run logs (contract section 14) written by the real worker (node dist/worker.js, batches of 10
// records unless a test says otherwise) and read through the API.
const rig = appAndWorkerPerTest();

let queue: TestQueue;
const setup = (workerEnv: Record<string, string> | null = {}): Promise<ServiceClient> => rig.start((queue = testQueue('run-logs')), workerEnv);

interface LogLine {
  id: string;
  run_id: string;
  attempt: number;
  at: string;
  level: 'info' | 'warn' | 'error';
  message: string;
  data: Record<string, unknown> | null;
}

/** Every line of the run, page by page (`limit` per page). */
async function allLines(c: ServiceClient, pipelineId: string, runId: string, limit = 100): Promise<LogLine[]> {
  const lines: LogLine[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
    const page = await c.get(`/pipelines/${pipelineId}/runs/${runId}/logs${query}`).expect(200);
    lines.push(...(page.body.data as LogLine[]));
    cursor = page.body.next_cursor as string | null;
  } while (cursor);
  return lines;
}

/** The lines in list order, without ids and times: what the run said, in order. */
function told(lines: LogLine[]) {
  return lines.map(({ attempt, level, data }) => ({ attempt, level, data }));
}

test("a succeeded run's lines: queued, the attempt's start, each step's progress, the end; in write order", async () => {
  const c = await setup();
  const pipeline = await createPipeline(c, {}, 25);
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  const run = await waitForRun(c, pipeline.id, trigger.body.id, ended, 'the run to end');
  expect(run.status).toBe('succeeded');

  const lines = await allLines(c, pipeline.id, run.id);
  expect(told(lines)).toEqual([
    { attempt: 0, level: 'info', data: { trigger: 'manual' } },
    { attempt: 1, level: 'info', data: null },
    { attempt: 1, level: 'info', data: { records_read: 10, records_written: 10 } },
    { attempt: 1, level: 'info', data: { records_read: 20, records_written: 20 } },
    { attempt: 1, level: 'info', data: { records_read: 25, records_written: 25 } },
    { attempt: 1, level: 'info', data: { status: 'succeeded', records_read: 25, records_written: 25, error: null } },
  ]);
  expect(lines.map((l) => l.message)).toEqual([
    'Run queued (trigger: manual).',
    'Attempt 1 of 3 started.',
    'Step 1: 10 records read, 10 written so far.',
    'Step 2: 20 records read, 20 written so far.',
    'Step 3: 25 records read, 25 written so far.',
    'Run succeeded: 25 records read, 25 written.',
  ]);
  for (const line of lines) {
    expect(line.run_id).toBe(run.id);
    expect(line.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(line.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
  // Each line's `at` is its change's: the run's own timestamps, never going back.
  expect(lines[0]!.at).toBe(run.created_at);
  expect(lines[1]!.at).toBe(run.started_at);
  expect(lines[5]!.at).toBe(run.finished_at);
  const times = lines.map((l) => Date.parse(l.at));
  expect(times).toEqual([...times].sort((a, b) => a - b));
});

test('cursor paging: pages of 2 give the same lines in the same order; a cursor the platform did not issue is 400', async () => {
  const c = await setup();
  const pipeline = await createPipeline(c, {}, 25);
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  await waitForRun(c, pipeline.id, trigger.body.id, ended, 'the run to end');

  const whole = await c.get(`/pipelines/${pipeline.id}/runs/${trigger.body.id}/logs`).expect(200);
  expect(whole.body.data).toHaveLength(6);
  expect(whole.body.next_cursor).toBeNull();
  const first = await c.get(`/pipelines/${pipeline.id}/runs/${trigger.body.id}/logs?limit=2`).expect(200);
  expect(first.body.data).toHaveLength(2);
  expect(typeof first.body.next_cursor).toBe('string');
  expect(await allLines(c, pipeline.id, trigger.body.id, 2)).toEqual(whole.body.data);

  const forged = await c.get(`/pipelines/${pipeline.id}/runs/${trigger.body.id}/logs?cursor=bm90LWEtY3Vyc29y`).expect(400);
  expectErrorBody(forged.body, 'invalid_request');
  expect(forged.body.error.errors).toEqual([expect.objectContaining({ in: 'query', field: 'cursor', code: 'invalid_format' })]);
  await c.get(`/pipelines/${pipeline.id}/runs/${trigger.body.id}/logs?limit=0`).expect(400);
  await c.get(`/pipelines/${pipeline.id}/runs/${trigger.body.id}/logs?limit=101`).expect(400);
});

test("unknown run, another pipeline's run, another workspace's run: 404; a path id that is not a UUID: 400", async () => {
  const c = await setup(null);
  const pipeline = await createPipeline(c, {}, 10);
  const other = await createPipeline(c, { name: 'Other' }, 10);
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  // Queued, no worker: its log already holds the queued line.
  const queued = await c.get(`/pipelines/${pipeline.id}/runs/${trigger.body.id}/logs`).expect(200);
  expect(told(queued.body.data as LogLine[])).toEqual([{ attempt: 0, level: 'info', data: { trigger: 'manual' } }]);

  expectErrorBody(
    await c
      .get(`/pipelines/${pipeline.id}/runs/00000000-0000-4000-8000-000000000000/logs`)
      .expect(404)
      .then((r) => r.body),
    'not_found',
  );
  expectErrorBody(
    await c
      .get(`/pipelines/${other.id}/runs/${trigger.body.id}/logs`)
      .expect(404)
      .then((r) => r.body),
    'not_found',
  );
  const stranger = serviceClient('pipelines', rig.app!.server, testIdentity());
  expectErrorBody(
    await stranger
      .get(`/pipelines/${pipeline.id}/runs/${trigger.body.id}/logs`)
      .expect(404)
      .then((r) => r.body),
    'not_found',
  );
  const bad = await c.get(`/pipelines/${pipeline.id}/runs/not-a-uuid/logs`).expect(400);
  expect(bad.body.error.errors).toEqual([expect.objectContaining({ in: 'path', field: 'run_id' })]);
});

test('a run cancelled while queued ends with its cancelled line (attempt 0); one cancelled while running keeps its progress and ends cancelled', async () => {
  const c = await setup({ WORKER_STEP_DELAY_MS: '1000' });
  const pipeline = await createPipeline(c, {}, 100);
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'webhook' }).expect(202);
  await waitForRun(c, pipeline.id, trigger.body.id, (r) => r.stats.records_written >= 10, 'the first step');
  const cancelled = (await c.post(`/pipelines/${pipeline.id}/runs/${trigger.body.id}/cancel`).expect(200)).body;
  const lines = await allLines(c, pipeline.id, trigger.body.id);
  expect(lines[0]).toMatchObject({ attempt: 0, data: { trigger: 'webhook' } });
  expect(lines[1]).toMatchObject({ attempt: 1, message: 'Attempt 1 of 3 started.' });
  const last = lines[lines.length - 1]!;
  expect(last).toMatchObject({
    attempt: 1,
    level: 'info',
    message: 'Run cancelled.',
    at: cancelled.finished_at,
    data: { status: 'cancelled', records_read: cancelled.stats.records_read, records_written: cancelled.stats.records_written, error: null },
  });
  const progress = lines.slice(2, -1);
  expect(progress.length).toBeGreaterThanOrEqual(1);
  expect(progress.map((l) => l.data)).toEqual(progress.map((_, i) => ({ records_read: 10 * (i + 1), records_written: 10 * (i + 1) })));
  // The step in progress when the cancel came writes nothing more, its line neither: read once the
  // worker is done with the run (its job ended, failed as cancelled).
  const runs = new Queue(queue.name, { connection: { url: testRedisUrl() }, prefix: queueKeyPrefix(queue.prefix, queue.name) });
  try {
    await waitFor('the worker to end the cancelled job', async () => (await runs.getJobState(trigger.body.id)) === 'failed', 60_000, 100);
  } finally {
    await runs.close();
  }
  expect(await allLines(c, pipeline.id, trigger.body.id)).toEqual(lines);

  await rig.worker!.kill('SIGKILL');
  rig.worker = undefined;
  const second = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  await c.post(`/pipelines/${pipeline.id}/runs/${second.body.id}/cancel`).expect(200);
  expect(told(await allLines(c, pipeline.id, second.body.id))).toEqual([
    { attempt: 0, level: 'info', data: { trigger: 'manual' } },
    { attempt: 0, level: 'info', data: { status: 'cancelled', records_read: 0, records_written: 0, error: null } },
  ]);
});

describe('http-json sources', () => {
  let source: HttpServer;
  let base: string;
  let calls = 0;
  beforeAll(async () => {
    source = createServer((req, res) => {
      calls++;
      if (req.url === '/flaky' && calls === 1) {
        res.statusCode = 500;
        res.end('{"detail":"driver said: connection to 10.0.0.7 refused"}');
        return;
      }
      if (req.url === '/bad') {
        res.statusCode = 404;
        res.end();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify([{ id: 1 }, { id: 2 }, { id: 3 }]));
    });
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', () => resolve()));
    base = `http://127.0.0.1:${(source.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => source.close(() => resolve()));
  });

  test('a retried run shows the failed attempt with its error (warn), then the next attempt from its start to the end', async () => {
    const c = await setup();
    calls = 0;
    const pipeline = await createPipeline(c, { source: { connector: 'http-json', config: { url: `${base}/flaky` } } });
    const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
    const run = await waitForRun(c, pipeline.id, trigger.body.id, ended, 'the run to end');
    expect(run).toMatchObject({ status: 'succeeded', attempts: 2 });
    const lines = await allLines(c, pipeline.id, run.id);
    expect(told(lines)).toEqual([
      { attempt: 0, level: 'info', data: { trigger: 'manual' } },
      { attempt: 1, level: 'info', data: null },
      { attempt: 1, level: 'warn', data: { error: { code: 'source_error', message: 'the source answered 500' } } },
      { attempt: 2, level: 'info', data: null },
      { attempt: 2, level: 'info', data: { records_read: 3, records_written: 3 } },
      { attempt: 2, level: 'info', data: { status: 'succeeded', records_read: 3, records_written: 3, error: null } },
    ]);
    expect(lines[2]!.message).toBe('Attempt 1 failed and will be retried: the source answered 500');
    expect(lines[3]!.message).toBe('Attempt 2 of 3 started.');
    // The source's own words never reach the log.
    expect(JSON.stringify(lines)).not.toContain('10.0.0.7');
  });

  test('a failed run ends with an error line carrying the run error', async () => {
    const c = await setup();
    const pipeline = await createPipeline(c, { source: { connector: 'http-json', config: { url: `${base}/bad` } } });
    const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
    const run = await waitForRun(c, pipeline.id, trigger.body.id, ended, 'the run to end');
    expect(run.status).toBe('failed');
    const lines = await allLines(c, pipeline.id, run.id);
    expect(lines.map((l) => l.level)).toEqual(['info', 'info', 'error']);
    expect(lines[2]).toMatchObject({
      attempt: 1,
      message: 'Run failed: the source answered 404',
      data: { status: 'failed', records_read: 0, records_written: 0, error: run.error },
    });
  });
});

test('a run of 100,000 records with the default batch size writes a bounded number of lines (progress per step, not per record)', async () => {
  const c = await setup({ WORKER_BATCH_SIZE: '500' });
  const pipeline = await createPipeline(c, { destination: { connector: 'postgres', config: { table: 'bulk_records' } } }, 100_000);
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  const run = await waitForRun(c, pipeline.id, trigger.body.id, ended, 'the 100,000-record run to end', 120_000);
  expect(run).toMatchObject({ status: 'succeeded', stats: { records_read: 100_000, records_written: 100_000 } });
  const lines = await allLines(c, pipeline.id, run.id);
  // 200 steps of 500: queued + start + one progress line per step + end.
  const steps = 100_000 / 500;
  expect(lines.length).toBe(3 + maxProgressLines(steps));
  expect(lines.length).toBe(203);
  expect(lines[lines.length - 2]!.data).toEqual({ records_read: 100_000, records_written: 100_000 });
}, 150_000);
