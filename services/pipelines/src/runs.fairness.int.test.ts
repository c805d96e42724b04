import { Redis } from 'ioredis';
import { DEFAULT_SERVICE_QUOTA_LIMITS, queueKeyPrefix, type WorkspaceId } from '@platform/core';
import { serviceClient, testIdentity, testRedisUrl, waitFor, type ServiceClient } from '@platform/testing';
import { pipelinesStore } from './pipelines.store';
import { startTestApp, testQueue, type TestApp, type TestQueue } from './test/app';
import { closeTestPool, getRun, maxOverlap, watchMax, type RunBody } from './test/fixtures';
import { killAllWorkers, spawnWorker } from './test/worker';

// Contract section 20: at most PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS runs of one workspace are running
// at once over all workers, and a run of another workspace waits for no run of a busy workspace that
// had not started before it was queued. Two real worker processes of 2 slots each; workspace A has
// 200 runs queued, then workspace B triggers one.
const A_RUNS = 200;
const WORKERS = 2;
const CONCURRENCY = 2;
const SLOTS = WORKERS * CONCURRENCY;

let app: TestApp | undefined;
afterEach(async () => {
  await killAllWorkers();
  await app?.close();
  app = undefined;
});
afterAll(closeTestPool);

/** The queue's BullMQ event stream, in the order Redis executed the commands: [event, jobId] pairs. */
async function queueEvents(queue: TestQueue): Promise<{ event: string; jobId: string }[]> {
  const redis = new Redis(testRedisUrl());
  try {
    // BullMQ's key of the stream: <prefix>:<queue name>:events.
    const entries = await redis.xrange(`${queueKeyPrefix(queue.prefix, queue.name)}:${queue.name}:events`, '-', '+');
    return entries.map(([, fields]) => {
      const field = (name: string) => fields[fields.indexOf(name) + 1] ?? '';
      return { event: field('event'), jobId: field('jobId') };
    });
  } finally {
    redis.disconnect();
  }
}

/** `count` dry-run pipelines of one record for the workspace, created through the store (fast). */
async function pipelinesOf(db: TestApp['db'], workspaceId: string, count: number): Promise<string[]> {
  const store = pipelinesStore(db);
  const ids: string[] = [];
  for (let i = 0; i < count; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, count - i) }, (_, j) =>
        store.create(
          workspaceId as WorkspaceId,
          {
            name: `A ${i + j}`,
            sourceConnector: 'sample',
            sourceConfig: { records: 1, seed: i + j },
            destinationConnector: 'postgres',
            destinationConfig: { table: 'fair' },
          },
          DEFAULT_SERVICE_QUOTA_LIMITS,
        ),
      ),
    );
    for (const created of batch) {
      if (created.kind !== 'created') throw new Error(`pipeline not created: ${created.kind}`);
      ids.push(created.pipeline.id);
    }
  }
  return ids;
}

/** Triggers one dry run per pipeline through the API (the real path: insert, admission, job), a few at a time. */
async function triggerAll(c: ServiceClient, pipelineIds: string[]): Promise<void> {
  for (let i = 0; i < pipelineIds.length; i += 10) {
    await Promise.all(pipelineIds.slice(i, i + 10).map((id) => c.post(`/pipelines/${id}/runs`, { trigger: 'manual', dry_run: true }).expect(202)));
  }
}

async function scenario(cap: number) {
  const queue = testQueue('fair-runs');
  app = await startTestApp({ queue, workspaceMaxActiveRuns: cap });
  const db = app.db;
  const a = serviceClient('pipelines', app.server, testIdentity());
  const b = serviceClient('pipelines', app.server, testIdentity());
  const aId = a.identity.workspaceId;

  // A's backlog is queued before any worker runs: only `cap` of them are admitted (given a job).
  await triggerAll(a, await pipelinesOf(db, aId, A_RUNS));
  expect(await db.run.count({ where: { workspaceId: aId, status: 'queued' } })).toBe(A_RUNS);
  expect(await db.run.count({ where: { workspaceId: aId, status: 'queued', admittedAt: { not: null } } })).toBe(cap);

  const watch = watchMax(() => db.run.count({ where: { workspaceId: aId, status: 'running' } }));
  const env = {
    WORKER_CONCURRENCY: String(CONCURRENCY),
    PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS: String(cap),
    // One step of one record that lasts a while: runs overlap and slots stay busy.
    WORKER_STEP_DELAY_MS: '300',
  };
  const workers = Array.from({ length: WORKERS }, () => spawnWorker(queue, env));
  await Promise.all(workers.map((w) => w.ready));
  // A steady state: A's runs end and each end admits the next one.
  await waitFor('A runs to end', async () => (await db.run.count({ where: { workspaceId: aId, status: 'succeeded' } })) >= 2 * SLOTS, 60_000, 50);
  const waitingBeforeB = await db.run.count({ where: { workspaceId: aId, status: 'queued' } });
  const admittedWaitingBeforeB = await db.run.count({ where: { workspaceId: aId, status: 'queued', admittedAt: { not: null } } });

  const bPipeline = (await pipelinesOf(db, b.identity.workspaceId, 1))[0]!;
  const triggered = (await b.post(`/pipelines/${bPipeline}/runs`, { trigger: 'manual', dry_run: true }).expect(202)).body as RunBody;
  const bRun = await waitFor(
    "B's run to start",
    async () => {
      const run = await getRun(b, bPipeline, triggered.id);
      return run.started_at ? run : undefined;
    },
    60_000,
    25,
  );
  // Some more of A's runs after B's start, so the cap is watched across B's run too.
  const endedAtB = await db.run.count({ where: { workspaceId: aId, status: 'succeeded' } });
  await waitFor('more A runs to end', async () => (await db.run.count({ where: { workspaceId: aId, status: 'succeeded' } })) >= endedAtB + SLOTS, 60_000, 50);
  const watched = await watch.stop();
  const aRuns = await db.run.findMany({ where: { workspaceId: aId }, select: { id: true, startedAt: true, finishedAt: true } });
  const events = await queueEvents(queue);
  await Promise.all(workers.map((w) => w.kill('SIGKILL')));
  // What is left of A's backlog must not be picked up by another file's requeue.
  await db.run.updateMany({ where: { workspaceId: aId, status: { in: ['queued', 'running'] } }, data: { status: 'cancelled', finishedAt: new Date() } });

  return { cap, watched, aRuns, bRun, events, waitingBeforeB, admittedWaitingBeforeB };
}

/** The fairness rule, as event order: no A run that had not been taken before B's job was queued started before B. */
function expectBFirst(result: Awaited<ReturnType<typeof scenario>>) {
  const { bRun, aRuns, events } = result;
  // A had a backlog when B was queued: most of its runs were still waiting.
  expect(result.waitingBeforeB).toBeGreaterThan(A_RUNS / 2);
  // In Redis's own order: B's job was added ("waiting"), then taken ("active"); no A job was taken in between.
  const bAdded = events.findIndex((e) => e.jobId === bRun.id && e.event === 'waiting');
  const bActive = events.findIndex((e) => e.jobId === bRun.id && e.event === 'active');
  expect(bAdded).toBeGreaterThanOrEqual(0);
  expect(bActive).toBeGreaterThan(bAdded);
  expect(events.slice(bAdded + 1, bActive).filter((e) => e.event === 'active')).toEqual([]);
  // By the run rows: an A run whose start falls between B's created_at and started_at is one whose job
  // was not taken while B's waited: taken before B's job was in the queue, or after B's was taken by
  // a worker that then recorded its start first (another worker's slot, B's start still committing).
  const createdAt = Date.parse(bRun.created_at);
  const startedAt = Date.parse(bRun.started_at!);
  const startedMeanwhile = aRuns.filter((run) => run.startedAt && run.startedAt.getTime() > createdAt && run.startedAt.getTime() < startedAt);
  for (const run of startedMeanwhile) {
    const taken = events.findIndex((e) => e.jobId === run.id && e.event === 'active');
    expect({ run: run.id, takenWhileBWaited: taken < 0 || (taken > bAdded && taken < bActive) }).toEqual({ run: run.id, takenWhileBWaited: false });
  }
  expect(startedMeanwhile.length).toBeLessThanOrEqual(SLOTS);
}

test('cap 3 below 4 worker slots: A never runs more than 3 at once, and B starts in a slot A cannot take', async () => {
  const result = await scenario(3);
  // Watched throughout, and afterwards from the runs' own intervals; the cap was reached (A wanted more).
  expect(result.watched.samples).toBeGreaterThan(10);
  expect(result.watched.max).toBeLessThanOrEqual(3);
  expect(maxOverlap(result.aRuns, new Date())).toBe(3);
  expectBFirst(result);
}, 240_000);

test('cap 10 above 4 worker slots: A fills every slot and has admitted jobs waiting, yet B (priority 1) takes the next free slot', async () => {
  const result = await scenario(10);
  expect(result.watched.max).toBeLessThanOrEqual(SLOTS);
  // A's admitted jobs were waiting in the queue, ahead of B's in time: only the priority can put B first.
  expect(result.admittedWaitingBeforeB).toBeGreaterThan(0);
  expect(maxOverlap(result.aRuns, new Date())).toBe(SLOTS);
  expectBFirst(result);
}, 240_000);

test('maxOverlap counts runs at one instant, an end before a start at the same instant', () => {
  const at = (s: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, s));
  expect(
    maxOverlap(
      [
        { startedAt: at(0), finishedAt: at(10) },
        { startedAt: at(5), finishedAt: at(15) },
        { startedAt: at(10), finishedAt: at(20) },
        { startedAt: null, finishedAt: null },
      ],
      at(30),
    ),
  ).toBe(2);
  expect(maxOverlap([{ startedAt: at(0), finishedAt: null }], at(30))).toBe(1);
});
