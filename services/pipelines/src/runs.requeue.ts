import type { Logger } from '@platform/core';
import { RUN_JOB_NAME, runJobOptions, type RunsQueue } from './runs.queue';
import type { RunsRequeueStore } from './runs.store';

export interface RunRequeueOptions {
  queue: RunsQueue;
  runs: RunsRequeueStore;
  /** Only runs queued at least this long are looked at: the API adds a job right after its commit. */
  afterMs: number;
  intervalMs: number;
  backoffMs: number;
  logger: Logger;
  /** Runs looked at per pass. */
  batch?: number;
}

/**
 * Gives a job back to every run that waits `queued` with no job in this queue. The API answers
 * 202 only after the run row is committed and its job added; a Redis that comes back without
 * its data (no persistence, failover to an empty replica) loses the job, and without this the
 * run would stay queued for good, blocking its pipeline. A re-add is safe: the job id is the
 * run id (an existing job makes the add a no-op) and the worker takes a run only through the
 * conditional queued → running update. Runs never carry their queue's name, so one queue per
 * database is assumed (as deployed: one worker Deployment per pipelines database).
 */
export async function requeueLostRuns(options: RunRequeueOptions): Promise<number> {
  const stale = await options.runs.staleQueued(new Date(Date.now() - options.afterMs), options.batch ?? 100);
  let requeued = 0;
  for (const run of stale) {
    if (await options.queue.getJob(run.id)) continue;
    await options.queue.add(
      RUN_JOB_NAME,
      { run_id: run.id, workspace_id: run.workspaceId, pipeline_id: run.pipelineId },
      runJobOptions(run.id, options.backoffMs),
    );
    requeued++;
    options.logger.warn({ run_id: run.id, pipeline_id: run.pipelineId }, 'run was queued without a job (Redis lost it): job added again');
  }
  return requeued;
}

/** requeueLostRuns every `intervalMs`, one pass at a time; failures are logged and retried next time. */
export function startRunRequeue(options: RunRequeueOptions): { stop(): Promise<void> } {
  let pass: Promise<unknown> = Promise.resolve();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    pass = requeueLostRuns(options)
      .catch((err: unknown) => options.logger.warn({ err: err instanceof Error ? err.message : err }, 'requeue pass failed'))
      .finally(() => {
        busy = false;
      });
  }, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await pass;
    },
  };
}
