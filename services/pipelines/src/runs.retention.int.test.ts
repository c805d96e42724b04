import { join } from 'node:path';
import pg from 'pg';
import { prepareTestDatabase, testDatabaseUrl, uniqueDatabaseName } from '@platform/testing';
import { createDatabase, type Database } from './database';
import { KEPT_LATEST_RUNS, pruneEndedRuns, type PrunedRunTable } from './runs.retention';
import { runsRetentionStore } from './runs.store';

// Run retention (contract section 20) on a database of this file's own: a sweep deletes across
// every workspace, so it must not meet the runs of other test files.
const databaseUrl = testDatabaseUrl(uniqueDatabaseName('pipelines_retention'));
const sql = new pg.Client({ connectionString: databaseUrl });
const dbs: Database[] = [];

beforeAll(async () => {
  await prepareTestDatabase(databaseUrl, join(__dirname, '..', 'prisma', 'migrations'));
  await sql.connect();
});

afterAll(async () => {
  await Promise.all(dbs.map((db) => db.$disconnect()));
  await sql.end();
  const admin = new pg.Client({ connectionString: testDatabaseUrl('pipelines') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${new URL(databaseUrl).pathname.slice(1)}" WITH (FORCE)`);
  await admin.end();
});

/**
 * A pipeline with `count` runs created a minute apart from 300 days ago (run i is the i-th oldest),
 * two log lines each. Runs end when created unless `endedAt(i)` says otherwise (null: running).
 */
async function pipelineWithRuns(count: number, endedAt: (i: number) => string | null = () => 'created'): Promise<{ pipelineId: string; runIds: string[] }> {
  const { rows } = await sql.query<{ id: string }>(
    `INSERT INTO "pipelines" ("id", "workspace_id", "name", "source_connector", "source_config", "destination_connector", "destination_config")
     VALUES (gen_random_uuid(), gen_random_uuid(), 'p', 'sample', '{}', 'postgres', '{}') RETURNING "id"`,
  );
  const pipelineId = rows[0]!.id;
  const runIds: string[] = [];
  for (let i = 0; i < count; i++) {
    const ended = endedAt(i);
    const created = `now() - interval '300 days' + interval '${i} minutes'`;
    const finished = ended === null ? 'NULL' : ended === 'created' ? created : ended;
    const run = await sql.query<{ id: string }>(
      `INSERT INTO "runs" ("id", "workspace_id", "pipeline_id", "status", "trigger", "created_at", "finished_at")
       SELECT gen_random_uuid(), "workspace_id", "id", $2::run_status, 'manual', ${created}, ${finished} FROM "pipelines" WHERE "id" = $1
       RETURNING "id"`,
      [pipelineId, ended === null ? 'running' : 'succeeded'],
    );
    runIds.push(run.rows[0]!.id);
  }
  await sql.query(
    `INSERT INTO "run_logs" ("id", "workspace_id", "run_id", "attempt", "at", "level", "message")
     SELECT run_log_id(r."created_at"), r."workspace_id", r."id", 1, r."created_at", 'info', 'line ' || n
       FROM "runs" r CROSS JOIN generate_series(1, 2) n WHERE r."pipeline_id" = $1`,
    [pipelineId],
  );
  return { pipelineId, runIds };
}

async function remainingRunIds(pipelineId: string): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(`SELECT "id" FROM "runs" WHERE "pipeline_id" = $1 ORDER BY "created_at"`, [pipelineId]);
  return rows.map((r) => r.id);
}

async function logCount(runIds: readonly string[]): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(`SELECT count(*)::int AS "n" FROM "run_logs" WHERE "run_id" = ANY($1::uuid[])`, [runIds]);
  return rows[0]!.n;
}

function sweeper(counted: Record<PrunedRunTable, number>, batchSize: number) {
  const db = createDatabase(databaseUrl);
  dbs.push(db);
  return () => pruneEndedRuns({ store: runsRetentionStore(db), retentionDays: 90, batchSize, onPruned: (table, count) => (counted[table] += count) });
}

test('old ended runs beyond their pipeline latest 100 go with their logs, once each under two sweepers; recent, unended and latest runs stay', async () => {
  // 130 old runs: the 30 oldest go.
  const old = await pipelineWithRuns(130);
  // 150 runs: of the 50 beyond the latest 100, runs 10-19 ended 10 days ago and run 5 is still running.
  const mixed = await pipelineWithRuns(150, (i) => (i === 5 ? null : i >= 10 && i < 20 ? `now() - interval '10 days'` : 'created'));
  // 40 old runs: all among the latest 100.
  const few = await pipelineWithRuns(40);

  const counted: Record<PrunedRunTable, number> = { runs: 0, run_logs: 0 };
  const sweeps = await Promise.all([sweeper(counted, 7)(), sweeper(counted, 7)()]);

  const expectedGone = [...old.runIds.slice(0, 30), ...mixed.runIds.slice(0, 50).filter((_, i) => i !== 5 && !(i >= 10 && i < 20))];
  expect(sweeps[0] + sweeps[1]).toBe(expectedGone.length);
  expect(counted).toEqual({ runs: expectedGone.length, run_logs: 2 * expectedGone.length });

  expect(await remainingRunIds(old.pipelineId)).toEqual(old.runIds.slice(30));
  expect(await remainingRunIds(mixed.pipelineId)).toEqual(mixed.runIds.filter((_, i) => i === 5 || (i >= 10 && i < 20) || i >= 50));
  expect(await remainingRunIds(few.pipelineId)).toEqual(few.runIds);
  expect(old.runIds.slice(-KEPT_LATEST_RUNS).every((id) => !expectedGone.includes(id))).toBe(true);
  expect(await logCount(expectedGone)).toBe(0);
  expect(await logCount(old.runIds.slice(30))).toBe(2 * 100);

  // Nothing left to do: a further sweep deletes nothing.
  expect(await sweeper(counted, 7)()).toBe(0);
});
