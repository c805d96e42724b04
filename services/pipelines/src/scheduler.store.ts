import type { WorkspaceId } from '@platform/core';
import type { Database } from './database';
import type { Run } from './generated/prisma/client';
import { insertQueuedRun } from './runs.store';

/** One due pipeline handled by a tick pass. */
export type TickOutcome =
  | { outcome: 'created'; pipelineId: string; workspaceId: WorkspaceId; scheduledFor: Date; run: Run }
  /** The pipeline had a queued or running run (or the tick already had its run): no run, as the contract says. */
  | { outcome: 'skipped_active'; pipelineId: string; workspaceId: WorkspaceId; scheduledFor: Date; activeRunId: string | null };

interface DueRow {
  id: string;
  workspace_id: string;
  schedule: unknown;
  schedule_anchor_at: Date | null;
  next_run_at: Date;
  /** The pipeline's queued or running run when the pass locked it: named in the skip's log line. */
  active_run_id: string | null;
}

/** A due pipeline's schedule columns as a pass locked them. */
export interface DuePipeline {
  /** As stored (validated when it was set). */
  schedule: unknown;
  /** When the schedule was set or the pipeline resumed; null on rows from before the column. */
  scheduleAnchorAt: Date | null;
  nextRunAt: Date;
}

/** What a pass does for one due pipeline (planTick decides it). */
export interface TickPlan {
  /** The tick that gets a run; null: none. */
  scheduledFor: Date | null;
  /** The pipeline's next next_run_at; null: no more ticks. */
  nextRunAt: Date | null;
}

/** The scheduler's queries, across workspaces: a tick serves every workspace's due pipelines. */
export function schedulerStore(db: Database) {
  return {
    /**
     * One pass, in ONE transaction: locks up to `limit` due active pipelines (next_run_at ≤ now,
     * FOR UPDATE SKIP LOCKED: another scheduler takes the others) and writes for each what `plan`
     * decided: next_run_at moved, and the run of the tick through insertQueuedRun, which the
     * database refuses when the pipeline has an active run or the tick has its run. The caller
     * enqueues the created runs' jobs after the commit.
     */
    async tickDue(now: Date, limit: number, plan: (pipeline: DuePipeline, now: Date) => TickPlan): Promise<TickOutcome[]> {
      return db.$transaction(async (tx) => {
        const due = await tx.$queryRaw<DueRow[]>`
          SELECT p."id", p."workspace_id", p."schedule", p."schedule_anchor_at", p."next_run_at",
                 (SELECT r."id" FROM "runs" r WHERE r."pipeline_id" = p."id" AND r."status" IN ('queued', 'running') LIMIT 1) AS "active_run_id"
            FROM "pipelines" p
           WHERE p."status" = 'active' AND p."next_run_at" IS NOT NULL AND p."next_run_at" <= ${now}::timestamptz
           ORDER BY p."next_run_at"
           LIMIT ${limit}
             FOR UPDATE OF p SKIP LOCKED`;
        const outcomes: TickOutcome[] = [];
        for (const row of due) {
          const { scheduledFor, nextRunAt } = plan({ schedule: row.schedule, scheduleAnchorAt: row.schedule_anchor_at, nextRunAt: row.next_run_at }, now);
          await tx.pipeline.update({ where: { id: row.id }, data: { nextRunAt } });
          if (!scheduledFor) continue;
          // The row is this workspace's own pipeline: the workspace comes from it.
          const ids = { pipelineId: row.id, workspaceId: row.workspace_id as WorkspaceId, scheduledFor };
          const run = await insertQueuedRun(tx, {
            workspaceId: ids.workspaceId,
            pipelineId: row.id,
            trigger: 'schedule',
            since: undefined,
            dryRun: false,
            scheduledFor,
            now,
          });
          if (run) {
            outcomes.push({ outcome: 'created', ...ids, run });
          } else {
            // The insert decided; the run seen at lock time only names the reason (one query less per skipped tick).
            outcomes.push({ outcome: 'skipped_active', ...ids, activeRunId: row.active_run_id });
          }
        }
        return outcomes;
      });
    },

    /** The earliest next_run_at of an active pipeline (the partial index answers it), null when none has a schedule. */
    async earliestNextRunAt(): Promise<Date | null> {
      const earliest = await db.pipeline.findFirst({
        where: { status: 'active', nextRunAt: { not: null } },
        orderBy: { nextRunAt: 'asc' },
        select: { nextRunAt: true },
      });
      return earliest?.nextRunAt ?? null;
    },
  };
}
export type SchedulerStore = ReturnType<typeof schedulerStore>;
