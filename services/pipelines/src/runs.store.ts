import { randomUUID } from 'node:crypto';
import { afterCursor, LIST_ORDER, workspaceScoped, type Cursor, type EventType, type WorkspaceId } from '@platform/core';
import { recordOutboxEvents } from '@platform/webhooks';
import type { Database } from './database';
import { Prisma, type Pipeline, type Run, type RunStatus, type RunTrigger } from './generated/prisma/client';
import { renderRun } from './pipelines.render';
import { admissionPriority, freeSlots, MAX_WORKSPACE_MAX_ACTIVE_RUNS, type AdmittedRun } from './runs.admission';
import { progressLineDue, runLogLines, type RunLogError } from './run-logs';
import { writeRunLog, writeRunLogIfHeld } from './run-logs.store';

export type { Run, RunStatus, RunTrigger };

type Tx = Prisma.TransactionClient;

const ACTIVE: RunStatus[] = ['queued', 'running'];

export interface RunStats {
  recordsRead: number;
  recordsWritten: number;
}

export interface RunFailure {
  code: string;
  message: string;
}

/**
 * The advisory lock of one workspace's admission (a transaction-scoped lock: it holds through a
 * transaction-mode pooler). Namespaced so that no other lock of this database shares its key.
 */
export const ADMISSION_LOCK = 'pipelines-run-admission:';

/** The runs holding a workspace's slots: running, or admitted and waiting for a worker (runs_holding_slot_idx). */
const HOLDING_SLOT = Prisma.sql`("status" = 'running' OR ("status" = 'queued' AND "admitted_at" IS NOT NULL))`;

/** created, or refused: the pipeline is unknown or paused, it has an active run, or the tick already has its run. */
export type CreateRunResult = { kind: 'created'; run: Run } | { kind: 'refused' };

export type StartAttemptResult =
  | { kind: 'started'; run: Run; pipeline: Pipeline; attempt: number }
  | { kind: 'exhausted'; run: Run }
  /** Not queued or running (null: no such run). */
  | { kind: 'inactive'; status: RunStatus | null };

/** The run's `run.*` outbox event, written in the transaction `tx` that changed the run. */
async function emit(tx: Tx, type: EventType, run: Run, now: Date): Promise<void> {
  await recordOutboxEvents(tx, [{ type, workspaceId: run.workspaceId, data: renderRun(run) }], now);
}

/** What a queued run is made of: an API trigger (scheduledFor null) or a scheduler tick (trigger "schedule"). */
export interface QueuedRunInput {
  workspaceId: WorkspaceId;
  pipelineId: string;
  trigger: RunTrigger;
  /** undefined: the pipeline's last_successful_run_at; null: everything. */
  since: Date | null | undefined;
  dryRun: boolean;
  /** The tick that creates the run; null for every other run. */
  scheduledFor: Date | null;
  now: Date;
}

/**
 * THE insert of a queued run, for the API's trigger and the scheduler's ticks alike, in the
 * caller's transaction `tx`, with its run.queued event. One statement from the pipeline row (only
 * when `status = 'active'`; `since` omitted takes its last_successful_run_at); ON CONFLICT DO
 * NOTHING lets the database refuse a second active run (runs_one_active_per_pipeline) and a second
 * run for one tick (runs_pipeline_id_scheduled_for_key) without aborting the transaction. Null
 * when refused; the caller explains the refusal by reads if it needs to.
 */
export async function insertQueuedRun(tx: Tx, input: QueuedRunInput): Promise<Run | null> {
  const id = randomUUID();
  const sinceGiven = input.since !== undefined;
  const inserted = await tx.$executeRaw`
    INSERT INTO "runs" ("id", "workspace_id", "pipeline_id", "status", "trigger", "since", "dry_run", "scheduled_for", "created_at")
    SELECT ${id}::uuid, p."workspace_id", p."id", 'queued', ${input.trigger}::"run_trigger",
           CASE WHEN ${sinceGiven}::boolean THEN ${input.since ?? null}::timestamptz ELSE p."last_successful_run_at" END,
           ${input.dryRun}::boolean, ${input.scheduledFor}::timestamptz, ${input.now}::timestamptz
      FROM "pipelines" p
     WHERE p."id" = ${input.pipelineId}::uuid AND p."workspace_id" = ${input.workspaceId}::uuid AND p."status" = 'active'
    ON CONFLICT DO NOTHING`;
  if (inserted === 0) return null;
  const run = await tx.run.findFirstOrThrow({ where: { id, workspaceId: input.workspaceId } });
  await emit(tx, 'run.queued', run, input.now);
  await writeRunLog(tx, input.workspaceId, id, runLogLines.queued(run.trigger), input.now);
  return run;
}

/**
 * Run queries. Every state change is one conditional UPDATE (the status it leaves from, and for
 * the worker the attempt it holds) plus its `run.*` outbox event in the same transaction; never a
 * read-then-write.
 */
export function runsStore(db: Database) {
  /** Applies `data` where `where` still holds; returns the run after the change, with its event. */
  async function transition(
    workspaceId: WorkspaceId,
    id: string,
    where: Prisma.RunWhereInput,
    data: Prisma.RunUpdateManyMutationInput,
    event: EventType | null,
    now: Date,
  ): Promise<Run | null> {
    return db.$transaction(async (tx) => {
      const { count } = await tx.run.updateMany({ where: { ...where, id, workspaceId }, data });
      if (count === 0) return null;
      const run = await tx.run.findFirstOrThrow({ where: { id, workspaceId } });
      if (event) await emit(tx, event, run, now);
      // Every transition here ends the run (cancel, fail): its last log line, in the same transaction.
      await writeRunLog(tx, workspaceId, id, runLogLines.ended(run), now);
      return run;
    });
  }

  return workspaceScoped({
    /** Inserts a queued run (insertQueuedRun) for an API trigger: `scheduled_for` stays null whatever the trigger. */
    async create(
      workspaceId: WorkspaceId,
      pipelineId: string,
      input: { trigger: RunTrigger; since: Date | null | undefined; dryRun: boolean },
      now: Date,
    ): Promise<CreateRunResult> {
      const run = await db.$transaction((tx) => insertQueuedRun(tx, { workspaceId, pipelineId, ...input, scheduledFor: null, now }));
      return run ? { kind: 'created', run } : { kind: 'refused' };
    },

    find(workspaceId: WorkspaceId, pipelineId: string, id: string): Promise<Run | null> {
      return db.run.findFirst({ where: { id, pipelineId, workspaceId } });
    },

    async findActiveId(workspaceId: WorkspaceId, pipelineId: string): Promise<string | null> {
      const run = await db.run.findFirst({ where: { workspaceId, pipelineId, status: { in: ACTIVE } }, select: { id: true } });
      return run?.id ?? null;
    },

    list(workspaceId: WorkspaceId, pipelineId: string, filter: { status?: RunStatus; after?: Cursor; take: number }): Promise<Run[]> {
      return db.run.findMany({
        where: { workspaceId, pipelineId, ...(filter.status ? { status: filter.status } : {}), ...afterCursor(filter.after) },
        orderBy: [...LIST_ORDER],
        take: filter.take,
      });
    },

    /**
     * Admission (contract section 20, runs.admission.ts): under the workspace's advisory lock, counts
     * the runs holding its slots and marks its oldest waiting runs (created_at, id) admitted, up to
     * `maxActiveRuns` held in all; returns them oldest first with their BullMQ priority. The lock
     * makes admissions of one workspace take turns over every API and worker process; the count is
     * a statement after the lock, so it sees every admission committed before. A run that ends
     * meanwhile only makes the count high: whoever ended it admits again after its commit.
     */
    async admit(workspaceId: WorkspaceId, maxActiveRuns: number, now: Date): Promise<AdmittedRun[]> {
      return db.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${ADMISSION_LOCK + workspaceId}, 0))`;
        const [counted] = await tx.$queryRaw<{ held: number }[]>`
          SELECT count(*)::int AS "held" FROM "runs" WHERE "workspace_id" = ${workspaceId}::uuid AND ${HOLDING_SLOT}`;
        const held = counted?.held ?? 0;
        const slots = freeSlots(held, maxActiveRuns);
        if (slots === 0) return [];
        // A run cancelled since the subquery read it is left alone by the outer conditions.
        const admitted = await tx.$queryRaw<{ id: string; pipeline_id: string; created_at: Date }[]>`
          UPDATE "runs" SET "admitted_at" = ${now}::timestamptz
           WHERE "id" IN (SELECT "id" FROM "runs"
                           WHERE "workspace_id" = ${workspaceId}::uuid AND "status" = 'queued' AND "admitted_at" IS NULL
                           ORDER BY "created_at", "id" LIMIT ${slots})
             AND "status" = 'queued' AND "admitted_at" IS NULL
          RETURNING "id", "pipeline_id", "created_at"`;
        return admitted
          .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .map((run, index) => ({ id: run.id, workspaceId, pipelineId: run.pipeline_id, priority: admissionPriority(held, index) }));
      });
    },

    /** queued|running → cancelled. Null when the run is unknown or already ended. */
    cancel(workspaceId: WorkspaceId, pipelineId: string, id: string, now: Date): Promise<Run | null> {
      return transition(workspaceId, id, { pipelineId, status: { in: ACTIVE } }, { status: 'cancelled', finishedAt: now }, 'run.cancelled', now);
    },

    /**
     * queued|running → failed. With `attempt`, only while that attempt still holds the run (a
     * worker that lost its job cannot fail the attempt that replaced it).
     */
    fail(workspaceId: WorkspaceId, id: string, failure: RunFailure, now: Date, attempt?: number): Promise<Run | null> {
      return transition(
        workspaceId,
        id,
        { status: { in: ACTIVE }, ...(attempt === undefined ? {} : { attempts: attempt }) },
        { status: 'failed', errorCode: failure.code, errorMessage: failure.message, finishedAt: now },
        'run.failed',
        now,
      );
    },

    /**
     * A worker picks the run up: queued → running (the first time, with run.started), or running
     * → running for a retry, each adding one attempt and resetting the stats (an attempt starts
     * from the beginning; the destination upserts, so nothing is written twice). The new
     * attempts value fences the attempt: the worker's later updates name it.
     */
    async startAttempt(workspaceId: WorkspaceId, id: string, maxAttempts: number, now: Date): Promise<StartAttemptResult> {
      return db.$transaction(async (tx): Promise<StartAttemptResult> => {
        const reset = { attempts: { increment: 1 }, recordsRead: 0, recordsWritten: 0 };
        const first = await tx.run.updateMany({
          where: { id, workspaceId, status: 'queued' },
          data: { ...reset, status: 'running', startedAt: now },
        });
        const again =
          first.count === 1 ? first : await tx.run.updateMany({ where: { id, workspaceId, status: 'running', attempts: { lt: maxAttempts } }, data: reset });
        const run = await tx.run.findFirst({ where: { id, workspaceId }, include: { pipeline: true } });
        if (!run) return { kind: 'inactive', status: null };
        const { pipeline, ...row } = run;
        if (again.count === 0) return row.status === 'running' ? { kind: 'exhausted', run: row } : { kind: 'inactive', status: row.status };
        if (first.count === 1) await emit(tx, 'run.started', row, now);
        await writeRunLog(tx, workspaceId, id, runLogLines.started(row.attempts, maxAttempts), now);
        return { kind: 'started', run: row, pipeline, attempt: row.attempts };
      });
    },

    /**
     * Records the stats after step `step` (1-based) of the attempt, with its progress line when
     * progressLineDue(step), in one transaction; false when the attempt no longer holds a running
     * run (cancelled, replaced).
     */
    async recordProgress(workspaceId: WorkspaceId, id: string, attempt: number, stats: RunStats, step: number, now = new Date()): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const { count } = await tx.run.updateMany({ where: { id, workspaceId, status: 'running', attempts: attempt }, data: stats });
        if (count !== 1) return false;
        if (progressLineDue(step)) await writeRunLog(tx, workspaceId, id, runLogLines.progress(attempt, step, stats), now);
        return true;
      });
    },

    /**
     * An attempt failed and the queue will retry it: the run does not change (it stays running),
     * only its warn line is written, while the attempt still holds the run.
     */
    recordRetry(workspaceId: WorkspaceId, id: string, attempt: number, error: RunLogError, now = new Date()): Promise<boolean> {
      return db.$transaction((tx) => writeRunLogIfHeld(tx, workspaceId, id, runLogLines.retry(attempt, error), now));
    },

    /** Gives the attempt back at shutdown (the run stays running and another worker continues it), with its line. */
    async release(workspaceId: WorkspaceId, id: string, attempt: number, stats: RunStats, now = new Date()): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const { count } = await tx.run.updateMany({
          where: { id, workspaceId, status: 'running', attempts: attempt },
          data: { ...stats, attempts: { decrement: 1 } },
        });
        if (count !== 1) return false;
        await writeRunLog(tx, workspaceId, id, runLogLines.released(attempt, stats), now);
        return true;
      });
    },

    /**
     * running → succeeded for the attempt that holds the run. A non-dry run moves the pipeline's
     * last_successful_run_at forward to its started_at (never back), in the same transaction.
     */
    async succeed(workspaceId: WorkspaceId, id: string, attempt: number, stats: RunStats, now: Date): Promise<Run | null> {
      return db.$transaction(async (tx) => {
        const { count } = await tx.run.updateMany({
          where: { id, workspaceId, status: 'running', attempts: attempt },
          data: { ...stats, status: 'succeeded', finishedAt: now },
        });
        if (count === 0) return null;
        const run = await tx.run.findFirstOrThrow({ where: { id, workspaceId } });
        if (!run.dryRun && run.startedAt) {
          await tx.pipeline.updateMany({
            where: {
              id: run.pipelineId,
              workspaceId,
              OR: [{ lastSuccessfulRunAt: null }, { lastSuccessfulRunAt: { lt: run.startedAt } }],
            },
            data: { lastSuccessfulRunAt: run.startedAt },
          });
        }
        await emit(tx, 'run.succeeded', run, now);
        await writeRunLog(tx, workspaceId, id, runLogLines.ended(run), now);
        return run;
      });
    },
  });
}
export type RunsStore = ReturnType<typeof runsStore>;

/** The requeue's queries, across workspaces: it looks for lost jobs and stranded runs of every workspace. */
export function runsRequeueStore(db: Database) {
  return {
    /**
     * The runs admitted before `admittedBefore` and still `queued` (runs_admitted_queued_idx), oldest
     * admission first, each with the priority its admission would give it now: 1 + its workspace's
     * running runs + its admitted runs admitted before it.
     */
    async staleAdmitted(admittedBefore: Date, limit: number): Promise<AdmittedRun[]> {
      const rows = await db.$queryRaw<{ id: string; workspace_id: string; pipeline_id: string; priority: number }[]>`
        SELECT r."id", r."workspace_id", r."pipeline_id",
               LEAST(${MAX_WORKSPACE_MAX_ACTIVE_RUNS}::int,
                     (SELECT count(*) FROM "runs" h WHERE h."workspace_id" = r."workspace_id" AND h."status" = 'running')::int
                     + row_number() OVER (PARTITION BY r."workspace_id" ORDER BY r."admitted_at", r."created_at", r."id")::int) AS "priority"
          FROM "runs" r
         WHERE r."status" = 'queued' AND r."admitted_at" IS NOT NULL AND r."admitted_at" < ${admittedBefore}::timestamptz
         ORDER BY r."admitted_at"
         LIMIT ${limit}`;
      // The row is this workspace's own run: the workspace comes from it.
      return rows.map((row) => ({ id: row.id, workspaceId: row.workspace_id as WorkspaceId, pipelineId: row.pipeline_id, priority: row.priority }));
    },

    /**
     * Up to `limit` workspaces that have runs waiting for admission and fewer than `maxActiveRuns`
     * runs holding slots (a crash between a run's end and its admission leaves such a workspace
     * behind). A loose index scan of runs_awaiting_admission_idx: one probe per workspace, however
     * long a workspace's backlog.
     */
    async workspacesAwaitingAdmission(maxActiveRuns: number, limit: number): Promise<WorkspaceId[]> {
      const rows = await db.$queryRaw<{ workspace_id: string }[]>`
        WITH RECURSIVE "waiting" AS (
          (SELECT "workspace_id" FROM "runs" WHERE "status" = 'queued' AND "admitted_at" IS NULL ORDER BY "workspace_id" LIMIT 1)
          UNION ALL
          SELECT (SELECT r."workspace_id" FROM "runs" r
                   WHERE r."status" = 'queued' AND r."admitted_at" IS NULL AND r."workspace_id" > w."workspace_id"
                   ORDER BY r."workspace_id" LIMIT 1)
            FROM "waiting" w WHERE w."workspace_id" IS NOT NULL)
        SELECT w."workspace_id" FROM "waiting" w
         WHERE w."workspace_id" IS NOT NULL
           AND (SELECT count(*) FROM "runs" WHERE "workspace_id" = w."workspace_id" AND ${HOLDING_SLOT}) < ${maxActiveRuns}
         LIMIT ${limit}`;
      return rows.map((row) => row.workspace_id as WorkspaceId);
    },

    /** Runs waiting for admission in every workspace, counted up to `cap` (the worker's gauge, read at scrape time). */
    async countAwaitingAdmission(cap: number): Promise<number> {
      const [row] = await db.$queryRaw<{ waiting: number }[]>`
        SELECT count(*)::int AS "waiting" FROM (SELECT 1 FROM "runs" WHERE "status" = 'queued' AND "admitted_at" IS NULL LIMIT ${cap}) w`;
      return row?.waiting ?? 0;
    },
  };
}
export type RunsRequeueStore = ReturnType<typeof runsRequeueStore>;

/** What one retention batch deleted. */
export interface PrunedRuns {
  runs: number;
  runLogs: number;
  /** The latest `finished_at` of the batch's runs; null when it deleted none. */
  lastFinishedAt: Date | null;
}

/** The retention sweeper's deletes (contract section 20). */
export function runsRetentionStore(db: Database) {
  return {
    /**
     * Deletes up to `limit` runs that ended before `endedBefore` and have at least `keepLatest`
     * newer runs of their pipeline, with their log lines. SKIP LOCKED: sweepers of several workers
     * take disjoint rows and never wait on each other. The logs are deleted by the statement
     * itself (not left to the cascade) so that they are counted. `endedFrom`: where the previous
     * batch of the sweep stopped (the runs ended before it are kept, deleted or another sweeper's),
     * so a sweep walks past the kept runs once rather than once per batch.
     */
    async deleteEndedRuns(endedBefore: Date, keepLatest: number, limit: number, endedFrom: Date | null = null): Promise<PrunedRuns> {
      // The newer-run probe reads at most keepLatest entries of runs(workspace_id, pipeline_id, created_at).
      const [row] = await db.$queryRawUnsafe<{ runs: number; run_logs: number; last_finished_at: Date | null }[]>(
        `WITH "doomed" AS (
           SELECT r."id", r."finished_at" FROM "runs" r
            WHERE r."finished_at" < $1::timestamptz AND r."finished_at" >= COALESCE($4::timestamptz, '-infinity')
              AND r."status" IN ('succeeded', 'failed', 'cancelled')
              AND EXISTS (SELECT 1 FROM "runs" n
                           WHERE n."workspace_id" = r."workspace_id" AND n."pipeline_id" = r."pipeline_id"
                             AND (n."created_at", n."id") > (r."created_at", r."id")
                          OFFSET $2::int - 1 LIMIT 1)
            ORDER BY r."finished_at" LIMIT $3::int
            FOR UPDATE OF r SKIP LOCKED),
         "logs" AS (DELETE FROM "run_logs" WHERE "run_id" = ANY(ARRAY(SELECT "id" FROM "doomed")) RETURNING 1),
         "gone" AS (DELETE FROM "runs" WHERE "id" = ANY(ARRAY(SELECT "id" FROM "doomed")) RETURNING 1)
         SELECT (SELECT count(*) FROM "gone")::int AS "runs", (SELECT count(*) FROM "logs")::int AS "run_logs",
                (SELECT max("finished_at") FROM "doomed") AS "last_finished_at"`,
        endedBefore,
        keepLatest,
        limit,
        endedFrom,
      );
      return { runs: row?.runs ?? 0, runLogs: row?.run_logs ?? 0, lastFinishedAt: row?.last_finished_at ?? null };
    },
  };
}
export type RunsRetentionStore = ReturnType<typeof runsRetentionStore>;
