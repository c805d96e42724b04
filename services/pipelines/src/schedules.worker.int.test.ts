import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import {
  deleteRedisKeys,
  killSpawned,
  processRedisUrl,
  serviceClient,
  spawnService,
  testDatabaseUrl,
  testIdentity,
  uniqueDatabaseName,
  waitFor,
  type ReadyProcess,
  type ServiceClient,
} from '@platform/testing';
import { testQueue } from './test/app';
import { killAllWorkers, spawnWorker, type WorkerProcess } from './test/worker';
import { maxOverlap, watchMax, type RunBody } from './test/fixtures';

// Schedules ticked by real worker processes, on a database of this file's own: a scheduler ticks every
// workspace's pipelines of its database, so it must not meet the pipelines of other test files.
const database = uniqueDatabaseName('pipelines_sched');
const databaseUrl = testDatabaseUrl(database);
const queue = testQueue('schedules');
const apis: ReadyProcess[] = [];

// 60 records without updated_at: every run reads them all (a sample source's later runs read nothing new).
const source: Server = createServer((_req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(Array.from({ length: 60 }, (_, i) => ({ id: `r${i}` }))));
});
beforeAll(() => new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve)));

// A test that failed mid-way leaves its workers ticking this database; the next test must not share it with them.
afterEach(() => killAllWorkers());

afterAll(async () => {
  source.close();
  await killAllWorkers();
  await killSpawned();
  await deleteRedisKeys(queue.prefix, processRedisUrl());
  const admin = new pg.Client({ connectionString: testDatabaseUrl('pipelines') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${new URL(databaseUrl).pathname.slice(1)}" WITH (FORCE)`);
  await admin.end();
});

async function api(): Promise<ReadyProcess> {
  const proc = await spawnService('pipelines', join(__dirname, '..'), {
    database,
    env: { PIPELINES_RUNS_QUEUE: queue.name, QUEUE_PREFIX: queue.prefix, PIPELINES_SCHEDULE_MIN_INTERVAL_S: '1', CONNECTORS_ALLOW_PRIVATE: 'true' },
  });
  apis.push(proc);
  return proc;
}

function worker(env: Record<string, string> = {}): WorkerProcess {
  return spawnWorker(queue, {
    PIPELINES_DATABASE_URL: databaseUrl,
    REDIS_URL: processRedisUrl(),
    WORKER_SCHEDULER_ENABLED: 'true',
    WORKER_SCHEDULER_INTERVAL_MS: '200',
    ...env,
  });
}

async function runsOf(c: ServiceClient, pipelineId: string): Promise<RunBody[]> {
  return (await c.get(`/pipelines/${pipelineId}/runs?limit=100`).expect(200)).body.data;
}

async function sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** The skipped ticks a worker logged for a pipeline. */
function skippedTicks(workers: WorkerProcess[], pipelineId: string): { scheduled_for: string; active_run_id: string }[] {
  return workers
    .flatMap((w) => w.output().split('\n'))
    .filter((line) => line.includes('schedule tick skipped') && line.includes(pipelineId))
    .map((line) => JSON.parse(line));
}

/** A pipeline of a 5-record sample source on an interval schedule, created through the API process. */
async function scheduledSamplePipeline(c: ServiceClient, name: string, everySeconds: number): Promise<{ id: string }> {
  const table = name.toLowerCase().replace(/[^a-z0-9]+/g, '_');
  const body = {
    name,
    source: { connector: 'sample', config: { records: 5 } },
    destination: { connector: 'postgres', config: { table } },
    schedule: { type: 'interval', every_seconds: everySeconds },
  };
  return (await c.post('/pipelines', body).expect(201)).body;
}

const ended = (run: RunBody) => ['succeeded', 'failed', 'cancelled'].includes(run.status);

test('after an outage: one run, for the latest missed tick; next_run_at moves past now', async () => {
  const main = await api();
  const c = serviceClient('pipelines', main.url, testIdentity());
  const pipeline = await scheduledSamplePipeline(c, 'Hourly', 3600);
  // As if the schedule had been set 3.5 h ago and no scheduler had run since: three ticks missed.
  const anchor = new Date(Date.now() - 3.5 * 3_600_000);
  await sql(`UPDATE pipelines SET schedule_anchor_at = $1, next_run_at = $2 WHERE id = $3`, [anchor, new Date(anchor.getTime() + 3_600_000), pipeline.id]);

  const w = worker();
  await w.ready;
  const [run] = await waitFor(
    'the catch-up run',
    async () => {
      const runs = await runsOf(c, pipeline.id);
      return runs.length > 0 && ended(runs[0]!) ? runs : undefined;
    },
    60_000,
    100,
  );
  expect(run).toMatchObject({ trigger: 'schedule', status: 'succeeded', scheduled_for: new Date(anchor.getTime() + 3 * 3_600_000).toISOString() });
  // Once the schedule has moved past now (no tick is due any more), still one run: the missed ticks gave one run, not three.
  const nextRunAt = new Date(anchor.getTime() + 4 * 3_600_000).toISOString();
  await waitFor('next_run_at past now', async () => (await c.get(`/pipelines/${pipeline.id}`).expect(200)).body.next_run_at === nextRunAt);
  expect(await runsOf(c, pipeline.id)).toHaveLength(1);
  expect(w.output()).toContain('"msg":"schedule tick: run queued"');
  await w.kill('SIGTERM');
  expect(await w.exited).toEqual({ code: 0, signal: null });
});

test("a tick's run is a run like any other (run.queued, its queued log line, since from the last succeeded run); paused, no ticks; resumed, ticks from the resume time", async () => {
  const main = await api();
  const c = serviceClient('pipelines', main.url, testIdentity());
  const pipeline = await scheduledSamplePipeline(c, 'Every second', 1);
  const w = worker();
  await w.ready;
  const runs = await waitFor(
    'two ended tick runs',
    async () => {
      const listed = await runsOf(c, pipeline.id);
      return listed.filter(ended).length >= 2 ? listed.filter(ended) : undefined;
    },
    60_000,
    100,
  );
  for (const run of runs) expect(run).toMatchObject({ trigger: 'schedule', status: 'succeeded', dry_run: false });
  // Concurrency 1: a tick creates a run only once the previous one ended, so `since` is the previous run's started_at.
  expect(runs[0]!.since).toBeNull();
  expect(runs[1]!.since).toBe(runs[0]!.started_at);

  const [queued] = await sql<{ data: { id: string; trigger: string; scheduled_for: string } }>(
    `SELECT data FROM outbox_events WHERE type = 'run.queued' AND data->>'id' = $1`,
    [runs[1]!.id],
  );
  expect(queued!.data).toMatchObject({ id: runs[1]!.id, trigger: 'schedule', scheduled_for: runs[1]!.scheduled_for });
  const log = (await c.get(`/pipelines/${pipeline.id}/runs/${runs[1]!.id}/logs`).expect(200)).body.data;
  expect(log[0]).toMatchObject({ attempt: 0, level: 'info', data: { trigger: 'schedule' } });
  expect(log.at(-1)).toMatchObject({ data: { status: 'succeeded' } });

  const paused = (await c.post(`/pipelines/${pipeline.id}/pause`).expect(200)).body;
  expect(paused.next_run_at).toBeNull();
  const pausedAt = Date.now();
  // The scenario: paused for a while (ticks were due every second); what it made is checked below,
  // after a tick after the resume shows the scheduler kept passing meanwhile.
  await new Promise((resolve) => setTimeout(resolve, 2_500));

  const before = Date.now();
  const resumed = (await c.post(`/pipelines/${pipeline.id}/resume`).expect(200)).body;
  const firstTick = Date.parse(resumed.next_run_at);
  expect(firstTick).toBeGreaterThanOrEqual(before + 1_000);
  expect(firstTick).toBeLessThanOrEqual(Date.now() + 1_000);
  const ticked = await waitFor(
    'the first tick after the resume',
    async () => (await runsOf(c, pipeline.id)).find((run) => Date.parse(run.scheduled_for!) >= firstTick),
    60_000,
    100,
  );
  // A run created before the pause may still end; none was created for a tick while paused.
  const whilePaused = (await runsOf(c, pipeline.id)).filter((run) => Date.parse(run.scheduled_for!) > pausedAt && Date.parse(run.scheduled_for!) < before);
  expect(whilePaused).toEqual([]);
  expect(ticked.scheduled_for).toBe(resumed.next_run_at);
  await c.post(`/pipelines/${pipeline.id}/pause`).expect(200);
  await w.kill('SIGTERM');
  expect(await w.exited).toEqual({ code: 0, signal: null });
});

test('ticks count against the workspace cap: twelve due schedules of one workspace, cap 2, four worker slots: never more than 2 of its runs running, the rest wait for admission', async () => {
  const main = apis[0] ?? (await api());
  const c = serviceClient('pipelines', main.url, testIdentity());
  const workspaceId = c.identity.workspaceId;
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push((await scheduledSamplePipeline(c, `Capped ${i}`, 3600)).id);
  // As if every schedule had been set 1.5 h ago: all twelve are due at once, one tick each.
  const anchor = new Date(Date.now() - 1.5 * 3_600_000);
  await sql(`UPDATE pipelines SET schedule_anchor_at = $1, next_run_at = $2 WHERE id = ANY($3::uuid[])`, [anchor, new Date(anchor.getTime() + 3_600_000), ids]);

  // One connection per sampler: a pg client runs one query at a time.
  const clients = [new pg.Client({ connectionString: databaseUrl }), new pg.Client({ connectionString: databaseUrl })] as const;
  await Promise.all(clients.map((client) => client.connect()));
  const count = async (client: pg.Client, where: string) =>
    Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM runs WHERE workspace_id = $1 AND ${where}`, [workspaceId])).rows[0]!.n);
  try {
    const running = watchMax(() => count(clients[0], `status = 'running'`));
    const awaiting = watchMax(() => count(clients[1], `status = 'queued' AND admitted_at IS NULL`));
    const w = worker({ WORKER_CONCURRENCY: '4', PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS: '2', WORKER_STEP_DELAY_MS: '300' });
    await w.ready;
    await waitFor(
      'the twelve tick runs to end',
      async () => (await sql(`SELECT 1 FROM runs WHERE workspace_id = $1 AND status = 'succeeded'`, [workspaceId])).length === 12,
      90_000,
      100,
    );
    const [watchedRunning, watchedAwaiting] = [await running.stop(), await awaiting.stop()];
    expect(watchedRunning.max).toBeLessThanOrEqual(2);
    // The ticks' runs went through admission: some waited without a job while two held the slots.
    expect(watchedAwaiting.max).toBeGreaterThan(0);
    const runs = await sql<{ started_at: Date; finished_at: Date; trigger: string }>(
      `SELECT started_at, finished_at, trigger FROM runs WHERE workspace_id = $1`,
      [workspaceId],
    );
    expect(runs).toHaveLength(12);
    expect(runs.every((run) => run.trigger === 'schedule')).toBe(true);
    // Four slots were free for it, yet never more than two of its runs overlapped; two did (the cap was reached).
    expect(
      maxOverlap(
        runs.map((run) => ({ startedAt: run.started_at, finishedAt: run.finished_at })),
        new Date(),
      ),
    ).toBe(2);
    await w.kill('SIGTERM');
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}, 180_000);

test('two APIs, two workers, a 3 s interval for ~40 s, one worker SIGKILLed mid-run: exactly one run per tick, none overlapping, no tick lost', async () => {
  const [first, second] = [apis[0] ?? (await api()), await api()];
  const identity = testIdentity();
  const c1 = serviceClient('pipelines', first.url, identity);
  const c2 = serviceClient('pipelines', second.url, identity);
  const workers = [worker({ WORKER_STEP_DELAY_MS: '250' }), worker({ WORKER_STEP_DELAY_MS: '250' })];
  await Promise.all(workers.map((w) => w.ready));

  const created = (
    await c1
      .post('/pipelines', {
        name: 'Every 3 s',
        source: { connector: 'http-json', config: { url: `http://127.0.0.1:${(source.address() as { port: number }).port}/records` } },
        destination: { connector: 'postgres', config: { table: 'every3' } },
      })
      .expect(201)
  ).body;
  const every = 3_000;
  const set = (await c2.patch(`/pipelines/${created.id}`, { schedule: { type: 'interval', every_seconds: 3 } }).expect(200)).body;
  const firstTick = new Date(set.next_run_at).getTime();

  // Mid-way (a few ticks' runs done), SIGKILL the worker running the current run (6 steps of 250 ms: it runs ~1.5 s).
  await waitFor('three tick runs to end', async () => (await runsOf(c2, created.id)).filter(ended).length >= 3, 60_000, 100);
  const victim = await waitFor(
    'a running run',
    async () => {
      const running = (await runsOf(c2, created.id)).find((r) => r.status === 'running' && r.stats.records_written >= 10);
      const holder = running && workers.find((w) => w.output().includes(`"run_id":"${running.id}","pipeline_id"`));
      if (running && !holder)
        throw new Error(
          `no worker logged ${running.id}: ${workers
            .map((w) =>
              w
                .output()
                .split('\n')
                .filter((l) => l.includes(running.id))
                .join(' | '),
            )
            .join(' // ')}`,
        );
      return running && holder ? { run: running, worker: holder } : undefined;
    },
    60_000,
    50,
  );
  await victim.worker.kill('SIGKILL');
  const survivor = workers.find((w) => w !== victim.worker)!;
  // Ticks keep coming: until the killed run was finished by the survivor, a tick skipped naming it, and
  // the survivor queued ticks of its own, at least 8 ticks' runs in all.
  await waitFor(
    'the killed run finished by the survivor, and more ticks',
    async () => {
      const all = await runsOf(c2, created.id);
      return (
        all.find((r) => r.id === victim.run.id)?.status === 'succeeded' &&
        skippedTicks(workers, created.id).some((s) => s.active_run_id === victim.run.id) &&
        survivor.output().includes('"msg":"schedule tick: run queued"') &&
        all.length >= 8
      );
    },
    120_000,
    200,
  );

  // Stop the ticks, let the last run end.
  await c1.patch(`/pipelines/${created.id}`, { schedule: null }).expect(200);
  const runs = await waitFor(
    'every run to end',
    async () => {
      const all = await runsOf(c1, created.id);
      return all.every(ended) ? all : undefined;
    },
    60_000,
    100,
  );

  const ticks = runs.map((r) => new Date(r.scheduled_for!).getTime());
  // Every run came from a tick, each tick at most one run, and ticks are exactly first + k * 3 s.
  expect(runs.every((r) => r.trigger === 'schedule' && r.scheduled_for !== null)).toBe(true);
  expect(new Set(ticks).size).toBe(ticks.length);
  for (const tick of ticks) expect((tick - firstTick) % every).toBe(0);
  // No overlap: each run started after the previous one finished.
  const byStart = [...runs].sort((a, b) => a.started_at!.localeCompare(b.started_at!));
  for (let i = 1; i < byStart.length; i++) expect(byStart[i]!.started_at! >= byStart[i - 1]!.finished_at!).toBe(true);
  expect(runs.every((r) => r.status === 'succeeded')).toBe(true);
  // The killed run was finished by the survivor.
  expect(runs.find((r) => r.id === victim.run.id)).toMatchObject({ status: 'succeeded', attempts: 2 });

  // No tick lost: every tick from the first to the last is a run or a logged skip (the pipeline had an active run).
  const skipped = skippedTicks(workers, created.id);
  const skippedTimes = skipped.map((s) => new Date(s.scheduled_for).getTime());
  const last = Math.max(...ticks, ...skippedTimes);
  const expected = [];
  for (let t = firstTick; t <= last; t += every) expected.push(t);
  expect([...ticks, ...skippedTimes].sort((a, b) => a - b)).toEqual(expected);
  // A tick while the killed run was still active created nothing: it was skipped naming that run.
  expect(skipped.some((s) => s.active_run_id === victim.run.id)).toBe(true);
  // Each skip names a run that existed (the one active then).
  for (const s of skipped) expect(runs.map((r) => r.id)).toContain(s.active_run_id);
  // Ticks kept coming after the kill, from the survivor.
  expect(survivor.output()).toContain('"msg":"schedule tick: run queued"');
  expect(ticks.length).toBeGreaterThanOrEqual(8);
}, 300_000);
