import { registeredCounter, type Logger, type Registry } from '@platform/core';
import { RUN_JOB_NAME, runJobOptions, type RunsQueue } from './runs.queue';
import type { SchedulerStore, TickOutcome } from './scheduler.store';

const MIN_SLEEP_MS = 20;

export interface SchedulerOptions {
  store: SchedulerStore;
  queue: RunsQueue;
  /** The longest sleep between passes; a pass also comes at the earliest next_run_at when that is sooner. */
  intervalMs: number;
  /** Due pipelines per transaction; a full batch is followed by another pass at once. */
  batch: number;
  /** Job options of the runs' jobs (the API's PIPELINES_RUN_BACKOFF_MS). */
  backoffMs: number;
  logger: Logger;
  metrics: Registry;
}

/**
 * One pass: the due pipelines' ticks are committed (runs and run.queued events, next_run_at moved)
 * by schedulerStore.tickDue, then the created runs' jobs are added. A job that cannot be added
 * (Redis away) leaves its run queued, and the requeue of lost jobs (runs.requeue.ts) adds it later.
 */
export async function runSchedulerPass(
  options: Omit<SchedulerOptions, 'intervalMs' | 'metrics'>,
  count: (outcome: TickOutcome) => void,
): Promise<TickOutcome[]> {
  const outcomes = await options.store.tickDue(new Date(), options.batch);
  for (const outcome of outcomes) {
    count(outcome);
    const tick = { pipeline_id: outcome.pipelineId, workspace_id: outcome.workspaceId, scheduled_for: outcome.scheduledFor.toISOString() };
    if (outcome.outcome === 'skipped_active') {
      options.logger.info({ ...tick, active_run_id: outcome.activeRunId }, 'schedule tick skipped: the pipeline has an active run');
      continue;
    }
    options.logger.info({ ...tick, run_id: outcome.run.id }, 'schedule tick: run queued');
    try {
      await options.queue.add(
        RUN_JOB_NAME,
        { run_id: outcome.run.id, workspace_id: outcome.workspaceId, pipeline_id: outcome.pipelineId },
        runJobOptions(outcome.run.id, options.backoffMs),
      );
    } catch (err) {
      options.logger.warn({ ...tick, run_id: outcome.run.id, err: (err as Error).message }, 'scheduled run could not be queued; the requeue adds it later');
    }
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
