import { randomUUID } from 'node:crypto';
import { afterCursor, LIST_ORDER, workspaceScoped, type Cursor, type EventType, type WorkspaceId } from '@platform/core';
import { recordOutboxEvents } from '@platform/webhooks';
import type { Database } from './database';
import { Prisma, type Pipeline, type Run, type RunStatus, type RunTrigger } from './generated/prisma/client';
import { renderRun } from './pipelines.render';
import { MAX_PENDING_RUNS } from './pipelines.resources';
import { admissionPriority, freeSlots, MAX_WORKSPACE_MAX_ACTIVE_RUNS, type AdmittedRun } from './runs.admission';
import { progressLineDue, runLogLines, type RunLogError } from './run-logs';
import { writeRunLog, writeRunLogIfHeld } from './run-logs.store';

export type { Run, RunStatus, RunTrigger };

type Tx = Prisma.TransactionClient;

const ACTIVE: RunStatus[] = ['queued', 'running'];
/** What a cancel ends: a pending run too (contract section 19). */
const CANCELLABLE: RunStatus[] = ['pending', ...ACTIVE];

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

/**
 * The advisory lock of one pipeline's run line (contract section 19): the inserts of API-triggered
 * runs and the promotions of pending runs take turns under it, so the pending cap holds and a run
 * goes straight to `queued` only when no run waits before it. Transaction-scoped, like ADMISSION_LOCK.
 */
export const PIPELINE_RUNS_LOCK = 'pipelines-run-line:';

/**
 * Turns taken in this process, one at a time per key: a burst of triggers of one pipeline waits
 * here rather than each holding a pooled connection in a transaction blocked on the run line lock
 * (ten waiters would empty the pool for every other request). The database lock still orders the
 * turns of different processes.
 */
function turnsByKey() {
  const tails = new Map<string, Promise<unknown>>();
  return function inTurn<T>(key: string, task: () => Promise<T>): Promise<T> {
    const result = (tails.get(key) ?? Promise.resolve()).then(task, task);
    const tail = result.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return result;
  };
}

/** A pipeline's run line lock, held until the end of `tx`. */
async function lockRunLine(tx: Tx, pipelineId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${PIPELINE_RUNS_LOCK + pipelineId}, 0))`;
}

/**
 * A run created (`queued`, or `pending` behind the active run under the enqueue policy), or why not:
 * the pipeline is unknown or paused, a run blocks it (`blockingRunId`: the active run, or under the
 * reject policy the first pending run left from an earlier enqueue policy; null when it ended
 * meanwhile), or it already has MAX_PENDING_RUNS pending runs.
 */
export type CreateRunResult =
  { kind: 'created'; run: Run } | { kind: 'not_found' } | { kind: 'paused' } | { kind: 'active'; blockingRunId: string | null } | { kind: 'too_many_pending' };

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
  /** The run a retry retries (contract section 19); null or absent otherwise. */
  retryOf?: string | null;
  now: Date;
}

/** The run row just inserted, with its run.queued event and its first log line (`tx` is the insert's). */
async function announceCreated(tx: Tx, workspaceId: WorkspaceId, id: string, now: Date): Promise<Run> {
  const run = await tx.run.findFirstOrThrow({ where: { id, workspaceId } });
  // Contract section 19: run.queued is emitted when a run is created, pending or not.
  await emit(tx, 'run.queued', run, now);
  await writeRunLog(tx, workspaceId, id, runLogLines.queued(run.trigger), now);
  return run;
}

/**
 * THE insert of a queued run, for the API's trigger and the scheduler's ticks alike, in the
 * caller's transaction `tx`, with its run.queued event. One statement from the pipeline row (only
 * when `status = 'active'` and no run of it is `pending`, which would come first; `since` omitted
 * takes its last_successful_run_at); ON CONFLICT DO NOTHING lets the database refuse a second
 * active run (runs_one_active_per_pipeline) and a second run for one tick
 * (runs_pipeline_id_scheduled_for_key) without aborting the transaction. Null when refused; the
 * caller explains the refusal by reads if it needs to.
 */
export async function insertQueuedRun(tx: Tx, input: QueuedRunInput): Promise<Run | null> {
  const id = randomUUID();
  const sinceGiven = input.since !== undefined;
  const inserted = await tx.$executeRaw`
    INSERT INTO "runs" ("id", "workspace_id", "pipeline_id", "status", "trigger", "since", "dry_run", "scheduled_for", "retry_of", "created_at")
    SELECT ${id}::uuid, p."workspace_id", p."id", 'queued', ${input.trigger}::"run_trigger",
           CASE WHEN ${sinceGiven}::boolean THEN ${input.since ?? null}::timestamptz ELSE p."last_successful_run_at" END,
           ${input.dryRun}::boolean, ${input.scheduledFor}::timestamptz, ${input.retryOf ?? null}::uuid, ${input.now}::timestamptz
      FROM "pipelines" p
     WHERE p."id" = ${input.pipelineId}::uuid AND p."workspace_id" = ${input.workspaceId}::uuid AND p."status" = 'active'
       AND NOT EXISTS (SELECT 1 FROM "runs" w WHERE w."pipeline_id" = p."id" AND w."status" = 'pending')
    ON CONFLICT DO NOTHING`;
  if (inserted === 0) return null;
  return announceCreated(tx, input.workspaceId, id, input.now);
}

/**
 * The insert of a pending run (enqueue policy), under the pipeline's run line lock held by `tx`:
 * only while the pipeline is active and has fewer than MAX_PENDING_RUNS pending runs. Its
 * `created_at` is after every earlier run of the pipeline (at least 1 ms), so trigger order, the
 * order (created_at, id) in which pending runs are promoted, is the order the lock admitted them in.
 */
async function insertPendingRun(tx: Tx, input: Omit<QueuedRunInput, 'scheduledFor'>): Promise<Run | null> {
  const id = randomUUID();
  const sinceGiven = input.since !== undefined;
  const inserted = await tx.$executeRaw`
    INSERT INTO "runs" ("id", "workspace_id", "pipeline_id", "status", "trigger", "since", "dry_run", "retry_of", "created_at")
    SELECT ${id}::uuid, p."workspace_id", p."id", 'pending', ${input.trigger}::"run_trigger",
           CASE WHEN ${sinceGiven}::boolean THEN ${input.since ?? null}::timestamptz ELSE p."last_successful_run_at" END,
           ${input.dryRun}::boolean, ${input.retryOf ?? null}::uuid,
           GREATEST(${input.now}::timestamptz,
                    (SELECT max(l."created_at") + interval '1 millisecond' FROM "runs" l
                      WHERE l."workspace_id" = p."workspace_id" AND l."pipeline_id" = p."id"))
      FROM "pipelines" p
     WHERE p."id" = ${input.pipelineId}::uuid AND p."workspace_id" = ${input.workspaceId}::uuid AND p."status" = 'active'
       AND (SELECT count(*) FROM "runs" w WHERE w."pipeline_id" = p."id" AND w."status" = 'pending') < ${MAX_PENDING_RUNS}`;
  if (inserted === 0) return null;
  return announceCreated(tx, input.workspaceId, id, input.now);
}

/**
 * Run queries. Every state change is one conditional UPDATE (the status it leaves from, and for
 * the worker the attempt it holds) plus its `run.*` outbox event in the same transaction; never a
 * read-then-write.
 */
export function runsStore(db: Database) {
  const runLineTurn = turnsByKey();

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
    /**
     * A run for an API trigger or retry (`scheduled_for` null whatever the trigger), under the
     * pipeline's run line lock: `queued` (insertQueuedRun) when nothing runs or waits; else, under the
     * enqueue policy, `pending` behind the others (insertPendingRun). A refusal is explained by reads
     * in the same transaction; the inserts alone decide.
     */
    async create(
      workspaceId: WorkspaceId,
      pipelineId: string,
      input: { trigger: RunTrigger; since: Date | null | undefined; dryRun: boolean; retryOf?: string | null },
      now: Date,
    ): Promise<CreateRunResult> {
      const insert = () =>
        db.$transaction(async (tx): Promise<CreateRunResult> => {
          await lockRunLine(tx, pipelineId);
          const run = await insertQueuedRun(tx, { workspaceId, pipelineId, ...input, scheduledFor: null, now });
          if (run) return { kind: 'created', run };
          const pipeline = await tx.pipeline.findFirst({ where: { id: pipelineId, workspaceId }, select: { status: true, concurrencyPolicy: true } });
          if (!pipeline) return { kind: 'not_found' };
          if (pipeline.status === 'paused') return { kind: 'paused' };
          if (pipeline.concurrencyPolicy === 'enqueue') {
            const pending = await insertPendingRun(tx, { workspaceId, pipelineId, ...input, now });
            return pending ? { kind: 'created', run: pending } : { kind: 'too_many_pending' };
          }
          const blocking = await tx.run.findFirst({
            where: { workspaceId, pipelineId, status: { in: CANCELLABLE } },
            orderBy: [{ status: 'desc' }, { createdAt: 'asc' }],
            select: { id: true },
          });
          return { kind: 'active', blockingRunId: blocking?.id ?? null };
        });
      return runLineTurn(pipelineId, insert);
    },

    /**
     * pending → queued for the pipeline's first pending run (created_at, id), in one conditional
     * UPDATE under the run line lock: only while no run of the pipeline is queued or running and the
     * pipeline is active. Whoever may have made it possible calls it after its commit (the end of a
     * run, a pending insert, a resume, the requeue), so the last of them sees every change. The
     * promoted run then waits for admission like any queued run. Null when none was promoted.
     */
    async promoteNext(workspaceId: WorkspaceId, pipelineId: string, now: Date): Promise<Run | null> {
      return runLineTurn(pipelineId, () =>
        db.$transaction(async (tx) => {
          await lockRunLine(tx, pipelineId);
          const promoted = await tx.$queryRaw<{ id: string }[]>`
          UPDATE "runs" SET "status" = 'queued'
           WHERE "id" = (SELECT "id" FROM "runs"
                          WHERE "pipeline_id" = ${pipelineId}::uuid AND "workspace_id" = ${workspaceId}::uuid AND "status" = 'pending'
                          ORDER BY "created_at", "id" LIMIT 1)
             AND "status" = 'pending'
             AND NOT EXISTS (SELECT 1 FROM "runs" a WHERE a."pipeline_id" = ${pipelineId}::uuid AND a."status" IN ('queued', 'running'))
             AND EXISTS (SELECT 1 FROM "pipelines" p WHERE p."id" = ${pipelineId}::uuid AND p."workspace_id" = ${workspaceId}::uuid AND p."status" = 'active')
          RETURNING "id"`;
          const id = promoted[0]?.id;
          if (!id) return null;
          await writeRunLog(tx, workspaceId, id, runLogLines.promoted(), now);
          return tx.run.findFirstOrThrow({ where: { id, workspaceId } });
        }),
      );
    },

    find(workspaceId: WorkspaceId, pipelineId: string, id: string): Promise<Run | null> {
      return db.run.findFirst({ where: { id, pipelineId, workspaceId } });
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

    /** pending|queued|running → cancelled. Null when the run is unknown or already ended. */
    cancel(workspaceId: WorkspaceId, pipelineId: string, id: string, now: Date): Promise<Run | null> {
      return transition(workspaceId, id, { pipelineId, status: { in: CANCELLABLE } }, { status: 'cancelled', finishedAt: now }, 'run.cancelled', now);
    },

    /**
     * running → failed with error `timeout` (contract section 19), when the run has been running
     * longer than its pipeline's run_timeout_seconds, whatever attempt holds it; with run.failed and
     * its end line. `finished_at` is the database's clock at the update, which waits for a
     * destination commit that holds the run (whileHeld): every write that landed started before it.
     * Null when the run is not (or no longer) past its limit.
     */
    async timeOut(workspaceId: WorkspaceId, id: string): Promise<Run | null> {
      return db.$transaction(async (tx) => {
        // The row lock first: it waits for a destination commit holding the run (FOR SHARE), so the
        // clock read by the UPDATE below comes after that commit.
        await tx.$queryRaw`SELECT "id" FROM "runs" WHERE "id" = ${id}::uuid AND "workspace_id" = ${workspaceId}::uuid FOR NO KEY UPDATE`;
        const ended = await tx.$queryRaw<{ id: string }[]>`
          UPDATE "runs" r
             SET "status" = 'failed', "error_code" = 'timeout',
                 "error_message" = 'The run was running longer than its limit of ' || p."run_timeout_seconds" || ' seconds.',
                 "finished_at" = clock_timestamp()
            FROM "pipelines" p
           WHERE r."id" = ${id}::uuid AND r."workspace_id" = ${workspaceId}::uuid AND r."status" = 'running'
             AND p."id" = r."pipeline_id" AND p."run_timeout_seconds" IS NOT NULL
             AND r."started_at" + p."run_timeout_seconds" * interval '1 second' <= clock_timestamp()
          RETURNING r."id"`;
        if (ended.length === 0) return null;
        const run = await tx.run.findFirstOrThrow({ where: { id, workspaceId } });
        const now = run.finishedAt ?? new Date();
        await emit(tx, 'run.failed', run, now);
        await writeRunLog(tx, workspaceId, id, runLogLines.ended(run), now);
        return run;
      });
    },

    /**
     * Runs `commit` (a destination's COMMIT) while attempt `attempt` holds the running run, the run
     * row locked (FOR SHARE) until it returns: a cancel or a timeout of the run waits for the commit,
     * or, when it came first, the commit does not happen. False when the attempt no longer holds the
     * run (`commit` not called; the caller rolls back).
     */
    async whileHeld(workspaceId: WorkspaceId, id: string, attempt: number, commit: () => Promise<void>): Promise<boolean> {
      return db.$transaction(
        async (tx) => {
          const held = await tx.$queryRaw<{ id: string }[]>`
            SELECT "id" FROM "runs"
             WHERE "id" = ${id}::uuid AND "workspace_id" = ${workspaceId}::uuid AND "status" = 'running' AND "attempts" = ${attempt}
               FOR SHARE`;
          if (held.length === 0) return false;
          await commit();
          return true;
        },
        { timeout: 60_000 },
      );
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

    /**
     * Up to `limit` active pipelines with pending runs and no queued or running run: a process that
     * died between a run's end and the promotion after it leaves such a pipeline behind. A loose
     * index scan of runs_pending_idx: one probe per pipeline, however many runs wait.
     */
    async pipelinesWithStrandedPending(limit: number): Promise<{ workspaceId: WorkspaceId; pipelineId: string }[]> {
      const rows = await db.$queryRaw<{ pipeline_id: string; workspace_id: string }[]>`
        WITH RECURSIVE "waiting" AS (
          (SELECT "pipeline_id" FROM "runs" WHERE "status" = 'pending' ORDER BY "pipeline_id" LIMIT 1)
          UNION ALL
          SELECT (SELECT r."pipeline_id" FROM "runs" r
                   WHERE r."status" = 'pending' AND r."pipeline_id" > w."pipeline_id"
                   ORDER BY r."pipeline_id" LIMIT 1)
            FROM "waiting" w WHERE w."pipeline_id" IS NOT NULL)
        SELECT p."id" AS "pipeline_id", p."workspace_id" FROM "waiting" w JOIN "pipelines" p ON p."id" = w."pipeline_id"
         WHERE p."status" = 'active'
           AND NOT EXISTS (SELECT 1 FROM "runs" a WHERE a."pipeline_id" = p."id" AND a."status" IN ('queued', 'running'))
         LIMIT ${limit}`;
      // The row is this workspace's own pipeline: the workspace comes from it.
      return rows.map((row) => ({ workspaceId: row.workspace_id as WorkspaceId, pipelineId: row.pipeline_id }));
    },

    /**
     * Up to `limit` running runs past their pipeline's run_timeout_seconds, longest past first
     * (runs_running_started_at_idx), for the timeout sweeper (runs.timeouts.ts), which ends each with
     * runsStore.timeOut.
     */
    async timedOut(limit: number): Promise<{ id: string; workspaceId: WorkspaceId; pipelineId: string }[]> {
      const rows = await db.$queryRaw<{ id: string; workspace_id: string; pipeline_id: string }[]>`
        SELECT r."id", r."workspace_id", r."pipeline_id"
          FROM "runs" r JOIN "pipelines" p ON p."id" = r."pipeline_id"
         WHERE r."status" = 'running' AND p."run_timeout_seconds" IS NOT NULL
           AND r."started_at" + p."run_timeout_seconds" * interval '1 second' <= clock_timestamp()
         ORDER BY r."started_at"
         LIMIT ${limit}`;
      return rows.map((row) => ({ id: row.id, workspaceId: row.workspace_id as WorkspaceId, pipelineId: row.pipeline_id }));
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
