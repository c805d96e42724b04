import { registeredCounter, type Logger, type Registry, type WorkspaceId } from '@platform/core';
import type { RunAdmission } from './runs.admission';
import { latestTick, nextTick, storedSchedule } from './schedule';
import type { DuePipeline, SchedulerStore, TickOutcome, TickPlan } from './scheduler.store';

const MIN_SLEEP_MS = 20;

export interface SchedulerOptions {
  store: SchedulerStore;
  /** The worker's admission: a tick's run gets its job as any run does, under its workspace's cap. */
  admission: RunAdmission;
  /** The longest sleep between passes; a pass also comes at the earliest next_run_at when that is sooner. */
  intervalMs: number;
  /** Due pipelines per transaction; a full batch is followed by another pass at once. */
  batch: number;
  logger: Logger;
  metrics: Registry;
}

/**
 * What a scheduler pass does for a due pipeline at `now`: the run goes to the latest tick at or
 * before now (after an outage one run, for the latest missed tick, not one per tick; the due
 * next_run_at when no tick is found), and next_run_at moves to the first tick after now. Ticks
 * count from the anchor (when the schedule was set or the pipeline resumed). A stored schedule
 * that no longer reads gets no run and no next tick.
 */
export function planTick(pipeline: DuePipeline, now: Date): TickPlan {
  const schedule = storedSchedule(pipeline.schedule);
  if (!schedule) return { scheduledFor: null, nextRunAt: null };
  const anchor = pipeline.scheduleAnchorAt ?? pipeline.nextRunAt;
  return { scheduledFor: latestTick(schedule, anchor, now) ?? pipeline.nextRunAt, nextRunAt: nextTick(schedule, anchor, now) };
}

/**
 * One pass: the due pipelines' ticks, as planTick decides them, are committed (runs and run.queued
 * events, next_run_at moved) by schedulerStore.tickDue, then each ticked workspace admits its waiting runs (runs.admission.ts):
 * a tick's run counts against its workspace's cap like any run and gets its job once admitted. An
 * admission or a job add that fails (database or Redis away) leaves the runs queued, and the
 * requeue (runs.requeue.ts) admits them or adds their jobs later.
 */
export async function runSchedulerPass(
  options: Omit<SchedulerOptions, 'intervalMs' | 'metrics'>,
  count: (outcome: TickOutcome) => void,
): Promise<TickOutcome[]> {
  const outcomes = await options.store.tickDue(new Date(), options.batch, planTick);
  const ticked = new Set<WorkspaceId>();
  for (const outcome of outcomes) {
    count(outcome);
    const tick = { pipeline_id: outcome.pipelineId, workspace_id: outcome.workspaceId, scheduled_for: outcome.scheduledFor.toISOString() };
    if (outcome.outcome === 'skipped_active') {
      options.logger.info({ ...tick, active_run_id: outcome.activeRunId }, 'schedule tick skipped: the pipeline has an active run');
      continue;
    }
    options.logger.info({ ...tick, run_id: outcome.run.id }, 'schedule tick: run queued');
    ticked.add(outcome.workspaceId);
  }
  for (const workspaceId of ticked) {
    await options.admission
      .admit(workspaceId)
      .catch((err: unknown) =>
        options.logger.warn({ workspace_id: workspaceId, err: (err as Error).message }, 'scheduled runs could not be admitted; the requeue admits them later'),
      );
  }
  return outcomes;
}

/**
 * The scheduler loop of a run worker: a pass, then a sleep until the earliest next_run_at (at most
 * `intervalMs`, so a schedule set meanwhile waits no longer than that). Any number of workers run
 * it at once: the row locks (SKIP LOCKED) share the due pipelines out, and the unique index on
 * (pipeline_id, scheduled_for) refuses a second run for one tick. Ticks pass no gateway: no rate limit.
 */
export function startScheduler(options: SchedulerOptions): { stop(): Promise<void> } {
  const ticks = registeredCounter(options.metrics, 'pipeline_schedule_ticks_total', 'Schedule ticks this worker handled, by outcome.', ['outcome']);
  const counters = { created: ticks.labels('created'), skipped_active: ticks.labels('skipped_active') };
  for (const child of Object.values(counters)) child.inc(0);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    });

  const loop = (async () => {
    while (!stopped) {
      let delay = options.intervalMs;
      try {
        const outcomes = await runSchedulerPass(options, (outcome) => counters[outcome.outcome].inc());
        if (outcomes.length >= options.batch) continue;
        const earliest = await options.store.earliestNextRunAt();
        // A due pipeline another worker holds locked is past due: wait a little, not 0 ms.
        if (earliest) delay = Math.max(MIN_SLEEP_MS, Math.min(delay, earliest.getTime() - Date.now()));
      } catch (err) {
        options.logger.warn({ err: (err as Error).message }, 'scheduler pass failed; trying again');
      }
      if (!stopped) await sleep(delay);
    }
  })();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      await loop;
    },
  };
}
