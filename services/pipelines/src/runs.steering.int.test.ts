import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import pg from 'pg';
import { expectErrorBody, testDatabaseUrl, testRedisUrl, waitFor, type ServiceClient } from '@platform/testing';
import { queueKeyPrefix, type WorkspaceId } from '@platform/core';
import { workspaceSchema } from './connectors/postgres';
import { insertQueuedRun } from './runs.store';
import { createPipeline, destinationRows, ended, getRun, maxOverlap, runEvents, waitForRun, type RunBody } from './test/fixtures';
import { testQueue, type TestQueue } from './test/app';
import { appAndWorkerPerTest, spawnWorker } from './test/worker';

// Contract section 19: retries, the concurrency policy (pending runs) and run timeouts, on the real
// API, a real PostgreSQL and Redis, and real worker processes (node dist/worker.js).
const rig = appAndWorkerPerTest();
let queue: TestQueue;

function setup(workerEnv: Record<string, string> | null = {}): Promise<ServiceClient> {
  queue = testQueue('runs-steering');
  return rig.start(queue, workerEnv);
}

const trigger = (c: ServiceClient, pipelineId: string, body: object = { trigger: 'manual' }) => c.post(`/pipelines/${pipelineId}/runs`, body);
const retry = (c: ServiceClient, pipelineId: string, runId: string) => c.post(`/pipelines/${pipelineId}/runs/${runId}/retry`);

/** The state of a run's BullMQ job in the test's queue. */
async function jobState(runId: string): Promise<string> {
  const runs = new Queue(queue.name, { connection: { url: testRedisUrl() }, prefix: queueKeyPrefix(queue.prefix, queue.name) });
  try {
    return await runs.getJobState(runId);
  } finally {
    await runs.close();
  }
}

/** The pipeline's runs as the database holds them, in trigger order (created_at, id). */
async function runsInTriggerOrder(pipelineId: string) {
  return rig.app!.db.run.findMany({ where: { pipelineId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

/** Every run ended succeeded, each started after the one before it ended, in trigger order; none overlapped. */
async function expectRanOneAtATimeInOrder(pipelineId: string, count: number): Promise<void> {
  const runs = await runsInTriggerOrder(pipelineId);
  expect(runs).toHaveLength(count);
  expect(runs.map((r) => r.status)).toEqual(runs.map(() => 'succeeded'));
  for (let i = 1; i < runs.length; i++) {
    const [before, run] = [runs[i - 1]!, runs[i]!];
    expect({ run: i, startedAfterPreviousEnded: run.startedAt!.getTime() >= before.finishedAt!.getTime() }).toEqual({
      run: i,
      startedAfterPreviousEnded: true,
    });
  }
  expect(maxOverlap(runs, new Date())).toBe(1);
}

describe('fields', () => {
  test('a pipeline shows concurrency_policy (default reject) and run_timeout_seconds (default null); POST and PATCH set them; runs show retry_of', async () => {
    const c = await setup(null);
    const plain = await createPipeline(c);
    expect(plain).toMatchObject({ concurrency_policy: 'reject', run_timeout_seconds: null });
    const steered = await createPipeline(c, { concurrency_policy: 'enqueue', run_timeout_seconds: 10 });
    expect(steered).toMatchObject({ concurrency_policy: 'enqueue', run_timeout_seconds: 10 });

    const patched = (await c.patch(`/pipelines/${plain.id}`, { concurrency_policy: 'enqueue', run_timeout_seconds: 86_400 }).expect(200)).body;
    expect(patched).toMatchObject({ concurrency_policy: 'enqueue', run_timeout_seconds: 86_400 });
    const cleared = (await c.patch(`/pipelines/${plain.id}`, { run_timeout_seconds: null }).expect(200)).body;
    expect(cleared).toMatchObject({ concurrency_policy: 'enqueue', run_timeout_seconds: null });
    expect((await c.get(`/pipelines/${plain.id}`).expect(200)).body).toEqual(cleared);
    const listed = (await c.get('/pipelines').expect(200)).body.data as { id: string }[];
    expect(listed.find((p) => p.id === plain.id)).toEqual(cleared);

    const run = (await trigger(c, plain.id).expect(202)).body as RunBody;
    expect(run.retry_of).toBeNull();
    expect((await c.get(`/pipelines/${plain.id}/runs`).expect(200)).body.data).toEqual([run]);
    expect((await runEvents(run.id))[0]!.data).toEqual(run);
  });

  test('run_timeout_seconds outside 10..86400 or not an integer, and an unknown concurrency_policy, are 400 with the field named', async () => {
    const c = await setup(null);
    const pipeline = await createPipeline(c);
    const problems = async (body: object) =>
      expectErrorBody((await c.patch(`/pipelines/${pipeline.id}`, body).expect(400)).body, 'invalid_request').errors!.map((e) => [e.field, e.code]);
    expect(await problems({ run_timeout_seconds: 9 })).toEqual([['run_timeout_seconds', 'too_small']]);
    expect(await problems({ run_timeout_seconds: 86_401 })).toEqual([['run_timeout_seconds', 'too_large']]);
    expect(await problems({ run_timeout_seconds: 10.5 })).toEqual([['run_timeout_seconds', 'invalid_type']]);
    expect(await problems({ concurrency_policy: 'queue' })).toEqual([['concurrency_policy', 'invalid_enum']]);
    const created = await c.post('/pipelines', {
      name: 'x',
      source: { connector: 'sample' },
      destination: { connector: 'postgres', config: { table: 't' } },
      concurrency_policy: null,
    });
    expect(created.status).toBe(400);
  });
});

describe('retry', () => {
  test('a cancelled run is retried: 202, Location, the same trigger, since and dry_run, retry_of naming it, run.queued', async () => {
    const c = await setup(null);
    const pipeline = await createPipeline(c);
    const original = (await trigger(c, pipeline.id, { trigger: 'backfill', since: '2024-01-01T00:01:00.000Z', dry_run: true }).expect(202)).body as RunBody;
    await c.post(`/pipelines/${pipeline.id}/runs/${original.id}/cancel`).expect(200);
    const res = await retry(c, pipeline.id, original.id).expect(202);
    const again = res.body as RunBody;
    expect(again).toMatchObject({
      status: 'queued',
      trigger: 'backfill',
      since: '2024-01-01T00:01:00.000Z',
      dry_run: true,
      retry_of: original.id,
      scheduled_for: null,
    });
    expect(again.id).not.toBe(original.id);
    expect(res.headers.location).toBe(`/pipelines/v3/pipelines/${pipeline.id}/runs/${again.id}`);
    expect((await runEvents(again.id)).map((e) => e.type)).toEqual(['run.queued']);
    expect(await getRun(c, pipeline.id, again.id)).toEqual(again);
  });

  test('a failed run is retried with its since as it was (null stays null, not the last success)', async () => {
    const c = await setup(null);
    const pipeline = await createPipeline(c);
    const original = (await trigger(c, pipeline.id, { trigger: 'schedule', since: null }).expect(202)).body as RunBody;
    await rig.app!.db.run.update({
      where: { id: original.id },
      data: { status: 'failed', errorCode: 'source_error', errorMessage: 'x', finishedAt: new Date() },
    });
    await rig.app!.db.pipeline.update({ where: { id: pipeline.id }, data: { lastSuccessfulRunAt: new Date('2024-06-01T00:00:00.000Z') } });
    const again = (await retry(c, pipeline.id, original.id).expect(202)).body as RunBody;
    expect(again).toMatchObject({ trigger: 'schedule', since: null, dry_run: false, retry_of: original.id, scheduled_for: null });
  });

  test('only failed or cancelled runs: queued, running, succeeded and pending are 409 not_retryable', async () => {
    const c = await setup(null);
    const pipeline = await createPipeline(c, { concurrency_policy: 'enqueue' });
    const active = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    const pending = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    expect(pending.status).toBe('pending');
    const refusal = async (runId: string) => expectErrorBody((await retry(c, pipeline.id, runId).expect(409)).body, 'conflict');
    expect((await refusal(active.id)).errors).toEqual([expect.objectContaining({ in: 'path', field: 'run_id', code: 'not_retryable' })]);
    expect((await refusal(pending.id)).errors![0]!.code).toBe('not_retryable');
    await rig.app!.db.run.update({ where: { id: active.id }, data: { status: 'running', startedAt: new Date() } });
    expect((await refusal(active.id)).errors![0]!.code).toBe('not_retryable');
    await rig.app!.db.run.update({ where: { id: active.id }, data: { status: 'succeeded', finishedAt: new Date() } });
    expect(await refusal(active.id)).toMatchObject({ run_status: 'succeeded', errors: [expect.objectContaining({ code: 'not_retryable' })] });
  });

  test("the trigger's rules hold: an active run is 409 with active_run_id, a paused pipeline 400, an unknown run or pipeline 404", async () => {
    const c = await setup(null);
    const pipeline = await createPipeline(c);
    const first = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    await c.post(`/pipelines/${pipeline.id}/runs/${first.id}/cancel`).expect(200);
    const blocking = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    expect(expectErrorBody((await retry(c, pipeline.id, first.id).expect(409)).body, 'conflict')).toMatchObject({ active_run_id: blocking.id });
    await c.post(`/pipelines/${pipeline.id}/runs/${blocking.id}/cancel`).expect(200);

    await c.post(`/pipelines/${pipeline.id}/pause`).expect(200);
    const paused = expectErrorBody((await retry(c, pipeline.id, first.id).expect(400)).body, 'invalid_request');
    expect(paused.errors).toEqual([expect.objectContaining({ field: '', code: 'pipeline_paused' })]);
    await c.post(`/pipelines/${pipeline.id}/resume`).expect(200);

    const other = await createPipeline(c);
    await retry(c, other.id, first.id).expect(404);
    await retry(c, pipeline.id, '00000000-0000-4000-8000-000000000000').expect(404);
    await retry(c, '00000000-0000-4000-8000-000000000000', first.id).expect(404);
    await retry(c, pipeline.id, first.id).expect(202);
  });
});

describe('concurrency policy enqueue', () => {
  test('15 concurrent triggers: one queued, 14 pending (each with run.queued); then all run one at a time in trigger order', async () => {
    const c = await setup(null);
    const pipeline = await createPipeline(c, { concurrency_policy: 'enqueue' }, 20);
    const answers = await Promise.all(Array.from({ length: 15 }, () => trigger(c, pipeline.id)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
    const statuses = answers.map((a) => (a.body as RunBody).status);
    expect({ queued: statuses.filter((s) => s === 'queued').length, pending: statuses.filter((s) => s === 'pending').length }).toEqual({
      queued: 1,
      pending: 14,
    });
    for (const answer of answers) expect((await runEvents(answer.body.id)).map((e) => e.type)).toEqual(['run.queued']);
    // The one queued run comes first in trigger order.
    const before = await runsInTriggerOrder(pipeline.id);
    expect(before.map((r) => r.status)).toEqual(['queued', ...Array.from({ length: 14 }, () => 'pending')]);

    rig.worker = spawnWorker(queue, { WORKER_STEP_DELAY_MS: '20' });
    await rig.worker.ready;
    await waitFor('all 15 runs to end', async () => (await runsInTriggerOrder(pipeline.id)).every((r) => r.finishedAt !== null), 120_000, 200);
    await expectRanOneAtATimeInOrder(pipeline.id, 15);
  });

  test('at most 20 pending: the 21st is 409 too_many_pending; a pending run can be cancelled, which makes room', async () => {
    const c = await setup(null);
    const pipeline = await createPipeline(c, { concurrency_policy: 'enqueue' });
    const earlier = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    await c.post(`/pipelines/${pipeline.id}/runs/${earlier.id}/cancel`).expect(200);
    const active = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    expect(active.status).toBe('queued');
    const pending: RunBody[] = [];
    for (let i = 0; i < 20; i++) pending.push((await trigger(c, pipeline.id).expect(202)).body as RunBody);
    expect(pending.map((r) => r.status)).toEqual(pending.map(() => 'pending'));
    const refused = expectErrorBody((await trigger(c, pipeline.id).expect(409)).body, 'conflict');
    expect(refused.errors).toEqual([expect.objectContaining({ field: '', code: 'too_many_pending' })]);
    // A retry counts the same.
    expect(expectErrorBody((await retry(c, pipeline.id, earlier.id).expect(409)).body, 'conflict').errors![0]!.code).toBe('too_many_pending');
    expect(await runsInTriggerOrder(pipeline.id)).toHaveLength(22);

    const cancelled = (await c.post(`/pipelines/${pipeline.id}/runs/${pending[5]!.id}/cancel`).expect(200)).body as RunBody;
    expect(cancelled).toMatchObject({ status: 'cancelled', started_at: null });
    expect(cancelled.finished_at).not.toBeNull();
    expect((await runEvents(cancelled.id)).map((e) => e.type)).toEqual(['run.queued', 'run.cancelled']);
    await c.post(`/pipelines/${pipeline.id}/runs/${pending[5]!.id}/cancel`).expect(409);
    // Cancelling a pending run leaves the active one and the order of the others as they were.
    expect((await getRun(c, pipeline.id, active.id)).status).toBe('queued');
    expect((await getRun(c, pipeline.id, pending[0]!.id)).status).toBe('pending');

    const more = (await retry(c, pipeline.id, earlier.id).expect(202)).body as RunBody;
    expect(more).toMatchObject({ status: 'pending', retry_of: earlier.id });
    await trigger(c, pipeline.id).expect(409);
    const listed = (await c.get(`/pipelines/${pipeline.id}/runs?status=pending&limit=100`).expect(200)).body.data as RunBody[];
    expect(listed).toHaveLength(20);

    // Cancelling the active run starts the first pending one.
    await c.post(`/pipelines/${pipeline.id}/runs/${active.id}/cancel`).expect(200);
    expect((await getRun(c, pipeline.id, pending[0]!.id)).status).toBe('queued');
  });

  test('the reject policy is unchanged: a trigger while a run is active is 409 with active_run_id and creates nothing', async () => {
    const c = await setup(null);
    const pipeline = await createPipeline(c);
    const active = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    expect(expectErrorBody((await trigger(c, pipeline.id).expect(409)).body, 'conflict')).toMatchObject({ active_run_id: active.id });
    expect(await runsInTriggerOrder(pipeline.id)).toHaveLength(1);
  });

  test('a tick while a run is pending creates no run, even with nothing queued or running', async () => {
    const c = await setup(null);
    const pipeline = await createPipeline(c, { concurrency_policy: 'enqueue' });
    const active = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    await c.post(`/pipelines/${pipeline.id}/pause`).expect(200);
    // As a paused pipeline's line looks once its active run ended: one pending run, nothing active.
    await rig.app!.db.run.update({ where: { id: active.id }, data: { status: 'pending' } });
    await rig.app!.db.pipeline.update({ where: { id: pipeline.id }, data: { status: 'active' } });
    const tick = await rig.app!.db.$transaction((tx) =>
      insertQueuedRun(tx, {
        workspaceId: c.identity.workspaceId as WorkspaceId,
        pipelineId: pipeline.id,
        trigger: 'schedule',
        since: undefined,
        dryRun: false,
        scheduledFor: new Date(),
        now: new Date(),
      }),
    );
    expect(tick).toBeNull();
    expect(await runsInTriggerOrder(pipeline.id)).toHaveLength(1);
  });

  test('a paused pipeline starts no pending run until it is resumed; the resume starts them in order', async () => {
    const c = await setup({ WORKER_STEP_DELAY_MS: '150' });
    const pipeline = await createPipeline(c, { concurrency_policy: 'enqueue' }, 200);
    const first = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    const second = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    const third = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    expect([second.status, third.status]).toEqual(['pending', 'pending']);
    await waitForRun(c, pipeline.id, first.id, (r) => r.status === 'running', 'the first run to start', 60_000);
    await c.post(`/pipelines/${pipeline.id}/pause`).expect(200);
    await waitForRun(c, pipeline.id, first.id, ended, 'the first run to end', 60_000);
    // The worker tries the promotion (and the admission) after the run's end and before its job completes:
    // once the job is completed, the second run would be queued if the pause did not hold it.
    await waitFor('the first run job to complete', async () => (await jobState(first.id)) === 'completed', 60_000, 100);
    expect((await getRun(c, pipeline.id, second.id)).status).toBe('pending');
    expect((await getRun(c, pipeline.id, third.id)).status).toBe('pending');

    await c.post(`/pipelines/${pipeline.id}/resume`).expect(200);
    await waitForRun(c, pipeline.id, third.id, ended, 'the third run to end', 60_000);
    await expectRanOneAtATimeInOrder(pipeline.id, 3);
  });

  test('a worker SIGKILLed while it runs the active run with 5 pending: every run still runs once, in trigger order, never overlapping', async () => {
    const c = await setup({ WORKER_STEP_DELAY_MS: '100' });
    const pipeline = await createPipeline(c, { concurrency_policy: 'enqueue' }, 60);
    const runs: RunBody[] = [];
    for (let i = 0; i < 6; i++) runs.push((await trigger(c, pipeline.id).expect(202)).body as RunBody);
    expect(runs.slice(1).map((r) => r.status)).toEqual(runs.slice(1).map(() => 'pending'));
    await waitForRun(c, pipeline.id, runs[0]!.id, (r) => r.stats.records_written >= 20, 'the first run to be mid-way', 60_000);
    await rig.worker!.kill('SIGKILL');
    expect((await getRun(c, pipeline.id, runs[1]!.id)).status).toBe('pending');

    rig.worker = spawnWorker(queue, { WORKER_STEP_DELAY_MS: '20' });
    await rig.worker.ready;
    await waitFor('all 6 runs to end', async () => (await runsInTriggerOrder(pipeline.id)).every((r) => r.finishedAt !== null), 180_000, 200);
    await expectRanOneAtATimeInOrder(pipeline.id, 6);
    const after = await runsInTriggerOrder(pipeline.id);
    expect(after.map((r) => r.id)).toEqual(runs.map((r) => r.id));
    // The killed run was picked up again (attempt 2); every pending run ran once.
    expect(after.map((r) => r.attempts)).toEqual([2, 1, 1, 1, 1, 1]);
    for (const run of after) expect((await runEvents(run.id)).map((e) => e.type)).toEqual(['run.queued', 'run.started', 'run.succeeded']);
    expect(await destinationRows(c.identity.workspaceId, 'sample_records')).toMatchObject({ total: 60, distinct: 60 });
  });
});

describe('run timeout', () => {
  let source: Server | undefined;
  afterEach(async () => {
    source?.closeAllConnections();
    await new Promise((resolve) => source?.close(resolve) ?? resolve(undefined));
    source = undefined;
  });

  /** An http-json source whose first request is held (never answered unless told) and whose later ones answer at once. */
  async function heldSource(): Promise<{ url: string; firstClosed: Promise<void>; answerFirst(): void }> {
    let first: { req: IncomingMessage; res: ServerResponse } | undefined;
    let closed!: () => void;
    const firstClosed = new Promise<void>((resolve) => (closed = resolve));
    source = createServer((req, res) => {
      if (!first) {
        first = { req, res };
        res.on('close', () => closed());
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ id: 'ok-1' }, { id: 'ok-2' }]));
    });
    await new Promise<void>((resolve) => source!.listen(0, '127.0.0.1', resolve));
    const { port } = source.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/records`,
      firstClosed,
      answerFirst: () => {
        if (first && !first.res.writableEnded) first.res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ id: 'late-1' }]));
      },
    };
  }

  test('an http-json fetch that hangs past the limit: failed with timeout, the fetch aborted, not retried, logged; the pending run then starts', async () => {
    const c = await setup({ HTTP_JSON_TIMEOUT_MS: '120000' });
    const held = await heldSource();
    const pipeline = await createPipeline(c, {
      source: { connector: 'http-json', config: { url: held.url } },
      concurrency_policy: 'enqueue',
      run_timeout_seconds: 10,
    });
    const hung = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    const next = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    expect(next.status).toBe('pending');

    const timedOut = await waitForRun(c, pipeline.id, hung.id, ended, 'the hung run to time out', 90_000);
    expect(timedOut).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'timeout' }, stats: { records_read: 0, records_written: 0 } });
    expect(timedOut.error!.message).toMatch(/10 seconds/);
    expect(Date.parse(timedOut.finished_at!) - Date.parse(timedOut.started_at!)).toBeGreaterThanOrEqual(10_000);
    // The worker gave up the request: the source saw its connection close. Answering now reaches no one.
    await held.firstClosed;
    held.answerFirst();

    const after = await waitForRun(c, pipeline.id, next.id, ended, 'the pending run to run', 60_000);
    expect(after).toMatchObject({ status: 'succeeded', stats: { records_read: 2, records_written: 2 } });
    expect(Date.parse(after.started_at!)).toBeGreaterThanOrEqual(Date.parse(timedOut.finished_at!));
    expect((await destinationRows(c.identity.workspaceId, 'sample_records')).ids).toEqual(['ok-1', 'ok-2']);
    expect((await runEvents(hung.id)).map((e) => e.type)).toEqual(['run.queued', 'run.started', 'run.failed']);
    const logs = (await c.get(`/pipelines/${pipeline.id}/runs/${hung.id}/logs?limit=100`).expect(200)).body.data as { level: string; data: unknown }[];
    expect(logs.at(-1)).toMatchObject({ level: 'error', data: { status: 'failed', error: { code: 'timeout' } } });
    // Not retried: one attempt, no retry line.
    expect(logs.filter((l) => l.level === 'warn')).toEqual([]);
  });

  test('a postgres write in flight at the limit never lands: the run ends failed (timeout) and the destination keeps what it had', async () => {
    const c = await setup({ WORKER_STEP_DELAY_MS: '200' });
    const pipeline = await createPipeline(c, { run_timeout_seconds: 10 }, 10_000);
    const run = (await trigger(c, pipeline.id).expect(202)).body as RunBody;
    await waitForRun(c, pipeline.id, run.id, (r) => r.stats.records_written >= 20, 'a few batches', 60_000);

    // Hold the destination table so the next batch's INSERT waits past the limit.
    const table = `"${workspaceSchema(c.identity.workspaceId as WorkspaceId)}"."sample_records"`;
    const blocker = new pg.Client({ connectionString: testDatabaseUrl('pipelines') });
    await blocker.connect();
    let rowsWhileHeld: number;
    try {
      await blocker.query('BEGIN');
      await blocker.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
      rowsWhileHeld = Number((await blocker.query(`SELECT count(*) FROM ${table}`)).rows[0].count);
      // An INSERT of the worker waits on the lock.
      await waitFor(
        'a write to wait on the lock',
        async () => (await blocker.query(`SELECT 1 FROM pg_locks WHERE relation = $1::regclass AND NOT granted`, [table])).rowCount! > 0,
        60_000,
        100,
      );
      const timedOut = await waitForRun(c, pipeline.id, run.id, ended, 'the run to time out', 60_000);
      expect(timedOut).toMatchObject({ status: 'failed', error: { code: 'timeout' } });
      expect(timedOut.stats.records_written).toBe(rowsWhileHeld);
      await blocker.query('COMMIT');
    } catch (err) {
      await blocker.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
    // Once nobody holds or waits for a lock on the table, the waiting INSERT has ended one way or the other.
    await waitFor(
      'the waiting write to end',
      async () => (await blocker.query(`SELECT 1 FROM pg_locks WHERE relation = $1::regclass`, [table])).rowCount === 0,
      60_000,
      100,
    );
    const final = await getRun(c, pipeline.id, run.id);
    expect(Number((await blocker.query(`SELECT count(*) FROM ${table}`)).rows[0].count)).toBe(rowsWhileHeld);
    const latest = (await blocker.query(`SELECT max(synced_at) AS at FROM ${table}`)).rows[0].at as Date;
    expect(latest.getTime()).toBeLessThanOrEqual(Date.parse(final.finished_at!));
    await blocker.end();
    expect(final).toMatchObject({ status: 'failed', error: { code: 'timeout' }, stats: { records_written: rowsWhileHeld } });
  });
});
