import { queueKeyPrefix } from '@platform/core';
import { Queue } from 'bullmq';
import { serviceClient, testIdentity, testRedisUrl, waitFor, type ServiceClient } from '@platform/testing';
import { closeTestPool, createPipeline, destinationRows, ended, getRun, runEvents, waitForRun } from './test/fixtures';
import { startTestApp, testQueue, type TestApp, type TestQueue } from './test/app';
import { killAllWorkers, spawnWorker } from './test/worker';

// Worker processes are killed (SIGKILL) and stopped (SIGTERM) mid-run; runs must still end right.
let app: TestApp | undefined;

async function setup(): Promise<{ c: ServiceClient; queue: TestQueue }> {
  const queue = testQueue('runs-resilience');
  app = await startTestApp({ queue });
  return { c: serviceClient('pipelines', app.server, testIdentity()), queue };
}

afterEach(async () => {
  await killAllWorkers();
  await app?.close();
  app = undefined;
});
afterAll(closeTestPool);

test('a worker SIGKILLed mid-run: the stalled job is retried by another worker and succeeds (attempts 2), without duplicate rows', async () => {
  const { c, queue } = await setup();
  const first = spawnWorker(queue, { WORKER_STEP_DELAY_MS: '100' });
  const pipeline = await createPipeline(c, {}, 150);
  await first.ready;
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  await waitForRun(c, pipeline.id, trigger.body.id, (r) => r.stats.records_written >= 30, 'three steps');
  await first.kill('SIGKILL');
  const orphan = await getRun(c, pipeline.id, trigger.body.id);
  expect(orphan).toMatchObject({ status: 'running', attempts: 1 });
  expect((await destinationRows(c.identity.workspaceId, 'sample_records')).total).toBeGreaterThanOrEqual(30);

  const second = spawnWorker(queue);
  await second.ready;
  const run = await waitForRun(c, pipeline.id, trigger.body.id, ended, 'the retried run to end');
  expect(run).toMatchObject({ status: 'succeeded', attempts: 2, error: null, stats: { records_read: 150, records_written: 150 } });
  expect(run.started_at).toBe(orphan.started_at);
  const rows = await destinationRows(c.identity.workspaceId, 'sample_records');
  expect(rows).toMatchObject({ total: 150, distinct: 150 });
  expect((await runEvents(run.id)).map((e) => e.type)).toEqual(['run.queued', 'run.started', 'run.succeeded']);
});

test('SIGTERM lets the current step finish, hands the run back, exits 0; the next worker completes it', async () => {
  const { c, queue } = await setup();
  const first = spawnWorker(queue, { WORKER_STEP_DELAY_MS: '400' });
  const pipeline = await createPipeline(c, {}, 200);
  await first.ready;
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  const before = await waitForRun(c, pipeline.id, trigger.body.id, (r) => r.stats.records_written >= 10, 'one step');
  const exit = await first.kill('SIGTERM');
  expect(exit).toEqual({ code: 0, signal: null });
  // The step in progress was finished (written and recorded), then the worker stopped: before the run
  // ended (far from it: 200 records, a step of 10 every 400 ms), so it did not run the run to its end.
  const handedBack = await getRun(c, pipeline.id, trigger.body.id);
  expect(handedBack).toMatchObject({ status: 'running', attempts: 0 });
  expect(handedBack.stats.records_written).toBeGreaterThan(before.stats.records_written);
  expect(handedBack.stats.records_written % 10).toBe(0);
  expect(handedBack.stats.records_written).toBeLessThan(200);
  expect((await destinationRows(c.identity.workspaceId, 'sample_records')).total).toBe(handedBack.stats.records_written);
  expect(first.output()).toMatch(/"outcome":"released"/);

  const second = spawnWorker(queue);
  await second.ready;
  const run = await waitForRun(c, pipeline.id, trigger.body.id, ended, 'the continued run to end');
  expect(run).toMatchObject({ status: 'succeeded', attempts: 1, stats: { records_read: 200, records_written: 200 } });
  expect(await destinationRows(c.identity.workspaceId, 'sample_records')).toMatchObject({ total: 200, distinct: 200 });
});

test('a run already picked up 3 times (its workers died) is not started a 4th time: it ends failed, attempts_exhausted', async () => {
  const { c, queue } = await setup();
  const pipeline = await createPipeline(c, {}, 10);
  const trigger = await c.post(`/pipelines/${pipeline.id}/runs`, { trigger: 'manual' }).expect(202);
  // As three crashed attempts would have left it.
  await app!.db.run.update({ where: { id: trigger.body.id }, data: { status: 'running', attempts: 3, startedAt: new Date() } });
  const worker = spawnWorker(queue);
  await worker.ready;
  const run = await waitForRun(c, pipeline.id, trigger.body.id, ended, 'the run to end');
  expect(run).toMatchObject({ status: 'failed', attempts: 3, error: { code: 'attempts_exhausted' } });
  expect((await destinationRows(c.identity.workspaceId, 'sample_records')).total).toBe(0);
});

test('a malformed job payload fails at once, without retries', async () => {
  const { queue: testRuns } = await setup();
  const worker = spawnWorker(testRuns);
  const queue = new Queue(testRuns.name, { connection: { url: testRedisUrl() }, prefix: queueKeyPrefix(testRuns.prefix, testRuns.name) });
  try {
    await worker.ready;
    const job = await queue.add('run', { run_id: 'not-a-uuid', extra: true }, { attempts: 3, backoff: { type: 'fixed', delay: 10 } });
    // State first, then the job: a job read before it failed carries the attempts of before.
    await waitFor('the job to fail', async () => (await queue.getJobState(job.id!)) === 'failed', 60_000, 100);
    const failed = (await queue.getJob(job.id!))!;
    expect(failed.attemptsMade).toBe(1);
    expect(failed.failedReason).toMatch(/invalid run job payload/);
  } finally {
    await queue.close();
  }
});
