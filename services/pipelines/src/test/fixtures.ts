import pg from 'pg';
import { testDatabaseUrl, waitFor, type ServiceClient } from '@platform/testing';
import { workspaceSchema } from '../connectors/postgres';
import type { WorkspaceId } from '@platform/core';

export interface PipelineBody {
  name?: string;
  source?: { connector: string; config?: object };
  destination?: { connector: string; config?: object };
  concurrency_policy?: 'reject' | 'enqueue';
  run_timeout_seconds?: number | null;
}

/** Creates a pipeline (sample source of `records` records into `table`) and returns its body. */
export async function createPipeline(c: ServiceClient, body: PipelineBody = {}, records = 100) {
  workspaces.add(c.identity.workspaceId);
  const res = await c
    .post('/pipelines', {
      name: body.name ?? 'Sample sync',
      source: body.source ?? { connector: 'sample', config: { records, seed: 7 } },
      destination: body.destination ?? { connector: 'postgres', config: { table: 'sample_records' } },
      ...(body.concurrency_policy === undefined ? {} : { concurrency_policy: body.concurrency_policy }),
      ...(body.run_timeout_seconds === undefined ? {} : { run_timeout_seconds: body.run_timeout_seconds }),
    })
    .expect(201);
  return res.body as { id: string; status: string; last_successful_run_at: string | null };
}

export interface RunBody {
  id: string;
  pipeline_id: string;
  status: string;
  trigger: string;
  since: string | null;
  dry_run: boolean;
  attempts: number;
  stats: { records_read: number; records_written: number };
  error: { code: string; message: string } | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  scheduled_for: string | null;
  retry_of: string | null;
}

export async function getRun(c: ServiceClient, pipelineId: string, runId: string): Promise<RunBody> {
  return (await c.get(`/pipelines/${pipelineId}/runs/${runId}`).expect(200)).body as RunBody;
}

/** Polls the run until `until` holds. */
export function waitForRun(
  c: ServiceClient,
  pipelineId: string,
  runId: string,
  until: (run: RunBody) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<RunBody> {
  return waitFor(
    what,
    async () => {
      const run = await getRun(c, pipelineId, runId);
      return until(run) ? run : undefined;
    },
    timeoutMs,
    100,
  );
}

export const ended = (run: RunBody) => ['succeeded', 'failed', 'cancelled'].includes(run.status);

/** Workspaces whose destination schemas closeTestPool drops. */
const workspaces = new Set<string>();

let pool: pg.Pool | undefined;
function testPool(): pg.Pool {
  pool ??= new pg.Pool({ connectionString: testDatabaseUrl('pipelines'), max: 2 });
  return pool;
}

/** Drops the destination schemas of this file's workspaces, then closes the pool (afterAll). */
export async function closeTestPool(): Promise<void> {
  for (const workspaceId of workspaces) {
    await testPool().query(`DROP SCHEMA IF EXISTS "${workspaceSchema(workspaceId as WorkspaceId)}" CASCADE`);
  }
  workspaces.clear();
  await pool?.end();
  pool = undefined;
}

/** Rows of a workspace's destination table in the pipelines database (0 rows when it does not exist). */
export async function destinationRows(workspaceId: string, table: string): Promise<{ total: number; distinct: number; ids: string[] }> {
  const schema = workspaceSchema(workspaceId as WorkspaceId);
  const exists = await testPool().query('SELECT to_regclass($1) AS t', [`"${schema}"."${table}"`]);
  if (!exists.rows[0].t) return { total: 0, distinct: 0, ids: [] };
  const { rows } = await testPool().query<{ id: string }>(`SELECT id FROM "${schema}"."${table}" ORDER BY id`);
  return { total: rows.length, distinct: new Set(rows.map((r) => r.id)).size, ids: rows.map((r) => r.id) };
}

/** The run.* outbox events of one run, oldest first. */
export async function runEvents(runId: string): Promise<{ type: string; data: RunBody }[]> {
  const { rows } = await testPool().query<{ type: string; data: RunBody }>(
    `SELECT type, data FROM outbox_events WHERE data->>'id' = $1 ORDER BY created_at, id`,
    [runId],
  );
  return rows;
}

/** A run's [started_at, finished_at) interval, as the database holds it. */
export interface RunInterval {
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** The most runs running at one instant, from their [started_at, finished_at) intervals; a run not ended yet ends at `now`. */
export function maxOverlap(runs: RunInterval[], now: Date): number {
  const edges = runs
    .filter((run) => run.startedAt)
    .flatMap((run) => [
      { at: run.startedAt!.getTime(), delta: 1 },
      { at: (run.finishedAt ?? now).getTime(), delta: -1 },
    ])
    // At one instant an end comes before a start: the run that ended freed its slot first.
    .sort((a, b) => a.at - b.at || a.delta - b.delta);
  let current = 0;
  let max = 0;
  for (const edge of edges) {
    current += edge.delta;
    max = Math.max(max, current);
  }
  return max;
}

/** Samples `count` (e.g. a workspace's running runs) until stopped; stop() gives the largest value seen and how many samples. */
export function watchMax(count: () => Promise<number>, everyMs = 25): { stop(): Promise<{ max: number; samples: number }> } {
  let stopped = false;
  let max = 0;
  let samples = 0;
  const loop = (async () => {
    while (!stopped) {
      max = Math.max(max, await count());
      samples++;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { max, samples };
    },
  };
}
