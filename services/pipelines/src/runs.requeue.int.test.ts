import { join } from 'node:path';
import { Queue } from 'bullmq';
import pg from 'pg';
import { createLogger, DEFAULT_SERVICE_QUOTA_LIMITS, queueKeyPrefix, type WorkspaceId } from '@platform/core';
import { prepareTestDatabase, testDatabaseUrl, testIdentity, testRedisUrl, uniqueDatabaseName, waitFor } from '@platform/testing';
import { createDatabase } from './database';
import { pipelinesStore } from './pipelines.store';
import { runAdmission } from './runs.admission';
import { addRunJob, RUN_JOB_NAME, type RunJobData, type RunsQueue } from './runs.queue';
import { requeueLostRuns } from './runs.requeue';
import { endTimedOutRuns } from './runs.timeouts';
import { ADMISSION_LOCK, runsRequeueStore, runsStore } from './runs.store';
import { testQueue } from './test/app';

// The requeue looks at every workspace of its database: a database of this file's own.
const databaseUrl = testDatabaseUrl(uniqueDatabaseName('pipelines_requeue'));
const queueOf = testQueue('requeue');
const logger = createLogger('requeue-test', 'silent');
const CAP = 3;

let db: ReturnType<typeof createDatabase>;
let queue: RunsQueue;

beforeAll(async () => {
  await prepareTestDatabase(databaseUrl, join(__dirname, '..', 'prisma', 'migrations'));
  db = createDatabase(databaseUrl);
  queue = new Queue<RunJobData, void, typeof RUN_JOB_NAME>(queueOf.name, {
    connection: { url: testRedisUrl() },
    prefix: queueKeyPrefix(queueOf.prefix, queueOf.name),
  });
});

afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  await db.$disconnect();
  const admin = new pg.Client({ connectionString: testDatabaseUrl('pipelines') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${new URL(databaseUrl).pathname.slice(1)}" WITH (FORCE)`);
  await admin.end();
});

/** A workspace with `count` queued runs (one per pipeline), created as the API creates them, none admitted yet. */
async function queuedRuns(count: number): Promise<{ workspaceId: WorkspaceId; runIds: string[] }> {
  const workspaceId = testIdentity().workspaceId as WorkspaceId;
  const runIds: string[] = [];
  // Triggers a millisecond apart: the admission order (created_at, id) is the order of runIds.
  const base = Date.now();
  for (let i = 0; i < count; i++) {
    const made = await pipelinesStore(db).create(
      workspaceId,
      { name: `p${i}`, sourceConnector: 'sample', sourceConfig: { records: 1, seed: 0 }, destinationConnector: 'postgres', destinationConfig: { table: 't' } },
      DEFAULT_SERVICE_QUOTA_LIMITS,
    );
    if (made.kind !== 'created') throw new Error('pipeline not created');
    const created = await runsStore(db).create(workspaceId, made.pipeline.id, { trigger: 'manual', since: undefined, dryRun: true }, new Date(base + i));
    if (created.kind !== 'created') throw new Error('run not created');
    runIds.push(created.run.id);
  }
  return { workspaceId, runIds };
}

function requeue(admission = workerAdmission()) {
  return requeueLostRuns({ queue, runs: runsRequeueStore(db), admission, maxActiveRuns: CAP, afterMs: 0, intervalMs: 1_000, backoffMs: 100, logger });
}

function workerAdmission() {
  return runAdmission({
    admit: (workspaceId, maxActiveRuns, now) => runsStore(db).admit(workspaceId, maxActiveRuns, now),
    promote: async ({ workspaceId, pipelineId }, now) => (await runsStore(db).promoteNext(workspaceId, pipelineId, now)) !== null,
    enqueue: (job, priority) => addRunJob(queue, job, priority, 100),
    maxActiveRuns: CAP,
    logger,
  });
}

async function priorities(runIds: string[]): Promise<(number | null)[]> {
  return Promise.all(runIds.map(async (id) => (await queue.getJob(id))?.opts.priority ?? null));
}

test('admission gives the oldest waiting runs the free slots, with priorities 1..cap, under the cap however often it is called', async () => {
  const { workspaceId, runIds } = await queuedRuns(5);
  const first = await runsStore(db).admit(workspaceId, CAP, new Date());
  expect(first.map((run) => [run.id, run.priority])).toEqual([
    [runIds[0], 1],
    [runIds[1], 2],
    [runIds[2], 3],
  ]);
  // Full: nothing more, however often asked.
  expect((await Promise.all([1, 2, 3].map(() => runsStore(db).admit(workspaceId, CAP, new Date())))).flat()).toEqual([]);
  // One admitted run starts, another ends: one slot frees; the next waiting run is admitted behind the two held.
  await db.run.updateMany({ where: { id: runIds[0] }, data: { status: 'running', startedAt: new Date() } });
  await runsStore(db).cancel(workspaceId, (await db.run.findFirstOrThrow({ where: { id: runIds[1]! } })).pipelineId, runIds[1]!, new Date());
  expect((await runsStore(db).admit(workspaceId, CAP, new Date())).map((run) => [run.id, run.priority])).toEqual([[runIds[3], 3]]);
  // Another workspace is not held back by this one's backlog: its first run gets priority 1.
  const other = await queuedRuns(1);
  expect((await runsStore(db).admit(other.workspaceId, CAP, new Date())).map((run) => run.priority)).toEqual([1]);
});

test('an admission waits for the one in progress in another process and counts what it admitted (the workspace lock)', async () => {
  const { workspaceId, runIds } = await queuedRuns(6);
  // Another process admits three runs (not the oldest) and has not committed yet.
  const other = new pg.Client({ connectionString: databaseUrl });
  await other.connect();
  try {
    await other.query('BEGIN');
    await other.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [ADMISSION_LOCK + workspaceId]);
    await other.query(`UPDATE runs SET admitted_at = now() WHERE id = ANY($1::uuid[])`, [runIds.slice(3)]);
    let settled = false;
    const admitting = runsStore(db)
      .admit(workspaceId, CAP, new Date())
      .finally(() => (settled = true));
    // Either it waits on the lock (the rule) or, without one, it has already admitted beside the other process.
    await waitFor(
      'the admission to wait for the lock or to end',
      async () =>
        settled ||
        (
          await other.query(
            `SELECT 1 FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE d.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted`,
          )
        ).rowCount! > 0,
      60_000,
      10,
    );
    await other.query('COMMIT');
    expect(await admitting).toEqual([]);
  } finally {
    await other.end();
  }
  expect(await db.run.count({ where: { workspaceId, admittedAt: { not: null } } })).toBe(CAP);
});

test("the requeue gives admitted runs whose job was lost their job again, with their priority, and admits a workspace's waiting runs beside a free slot", async () => {
  // Two runs admitted by a process that died before it added their jobs; three more wait.
  const { workspaceId, runIds } = await queuedRuns(5);
  await runsStore(db).admit(workspaceId, 2, new Date());
  expect(await priorities(runIds)).toEqual([null, null, null, null, null]);

  const pass = await requeue();
  // (a) the two lost jobs, priorities 1 and 2 as their admission gave; (b) the free third slot, priority 3.
  expect(await priorities(runIds)).toEqual([1, 2, 3, null, null]);
  expect(pass.requeued).toBeGreaterThanOrEqual(2);
  expect(pass.admitted).toBeGreaterThanOrEqual(1);
  expect(await db.run.count({ where: { workspaceId, admittedAt: { not: null } } })).toBe(CAP);

  // Again: nothing to do for this workspace (its jobs exist, its slots are held).
  await requeue();
  expect(await priorities(runIds)).toEqual([1, 2, 3, null, null]);
});

/** An enqueue-policy pipeline with a queued run and `pending` pending runs behind it, as the API creates them. */
async function pipelineWithPending(pending: number, runTimeoutSeconds: number | null = null) {
  const workspaceId = testIdentity().workspaceId as WorkspaceId;
  const made = await pipelinesStore(db).create(
    workspaceId,
    {
      name: 'line',
      sourceConnector: 'sample',
      sourceConfig: { records: 1, seed: 0 },
      destinationConnector: 'postgres',
      destinationConfig: { table: 't' },
      concurrencyPolicy: 'enqueue',
      runTimeoutSeconds,
    },
    DEFAULT_SERVICE_QUOTA_LIMITS,
  );
  if (made.kind !== 'created') throw new Error('pipeline not created');
  const runIds: string[] = [];
  for (let i = 0; i <= pending; i++) {
    const created = await runsStore(db).create(workspaceId, made.pipeline.id, { trigger: 'manual', since: undefined, dryRun: true }, new Date());
    if (created.kind !== 'created') throw new Error(`run not created: ${created.kind}`);
    runIds.push(created.run.id);
  }
  return { workspaceId, pipelineId: made.pipeline.id, runIds };
}

async function statuses(runIds: string[]): Promise<string[]> {
  return Promise.all(runIds.map(async (id) => (await db.run.findUniqueOrThrow({ where: { id } })).status));
}

test('pending runs whose active run ended without a promotion (its process died) are not stranded: the requeue starts the next one, admitted', async () => {
  const { runIds } = await pipelineWithPending(2);
  expect(await statuses(runIds)).toEqual(['queued', 'pending', 'pending']);
  // The active run ended and its process died before the promotion after it.
  await db.run.update({ where: { id: runIds[0] }, data: { status: 'succeeded', startedAt: new Date(), finishedAt: new Date() } });

  const pass = await requeue();
  expect(pass.unstranded).toBeGreaterThanOrEqual(1);
  expect(await statuses(runIds)).toEqual(['succeeded', 'queued', 'pending']);
  // Promoted, then admitted like any queued run: its job is in the queue.
  expect((await priorities(runIds)).slice(1)).toEqual([1, null]);
  // Again: the second run is queued, so the third stays pending.
  await requeue();
  expect(await statuses(runIds)).toEqual(['succeeded', 'queued', 'pending']);
});

test('a paused pipeline keeps its pending runs through the requeue', async () => {
  const { workspaceId, pipelineId, runIds } = await pipelineWithPending(1);
  await pipelinesStore(db).setStatus(workspaceId, pipelineId, 'paused');
  await runsStore(db).cancel(workspaceId, pipelineId, runIds[0]!, new Date());
  await requeue();
  expect(await statuses(runIds)).toEqual(['cancelled', 'pending']);
  await pipelinesStore(db).setStatus(workspaceId, pipelineId, 'active');
  await requeue();
  expect(await statuses(runIds)).toEqual(['cancelled', 'queued']);
});

test('the timeout sweep ends a running run past its limit whose worker died (failed, timeout, run.failed, logged), tells its worker, and starts the next pending run', async () => {
  const { workspaceId, runIds } = await pipelineWithPending(1, 10);
  const within = await pipelineWithPending(0, 60);
  const started = new Date(Date.now() - 11_000);
  await db.run.update({ where: { id: runIds[0] }, data: { status: 'running', attempts: 1, startedAt: started } });
  await db.run.update({ where: { id: within.runIds[0] }, data: { status: 'running', attempts: 1, startedAt: started } });
  const announced: string[] = [];
  const ended = await endTimedOutRuns({
    runs: runsStore(db),
    requeue: runsRequeueStore(db),
    admission: workerAdmission(),
    announce: async (runId) => void announced.push(runId),
    batch: 100,
    logger,
  });
  expect(ended).toBeGreaterThanOrEqual(1);
  expect(announced).toContain(runIds[0]);
  const run = await db.run.findUniqueOrThrow({ where: { id: runIds[0] } });
  expect(run).toMatchObject({ status: 'failed', errorCode: 'timeout', errorMessage: 'The run was running longer than its limit of 10 seconds.' });
  expect(run.finishedAt!.getTime()).toBeGreaterThanOrEqual(started.getTime() + 10_000);
  const events = await db.outboxEvent.findMany({ where: { workspaceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  expect(events.filter((e) => (e.data as { id: string }).id === runIds[0]).map((e) => e.type)).toEqual(['run.queued', 'run.failed']);
  const lastLine = await db.runLog.findFirstOrThrow({ where: { runId: runIds[0] }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  expect(lastLine).toMatchObject({ level: 'error', data: { status: 'failed', error: { code: 'timeout' } } });
  expect(await statuses(runIds)).toEqual(['failed', 'queued']);
  expect((await db.run.findUniqueOrThrow({ where: { id: runIds[1] } })).admittedAt).not.toBeNull();
  // A run within its limit is left alone; a second pass ends nothing more of this pipeline.
  expect(await statuses(within.runIds)).toEqual(['running']);
  expect(await runsStore(db).timeOut(workspaceId, runIds[0]!)).toBeNull();
});
