import { runPeriodically, type Logger } from '@platform/core';
import type { RunAdmission } from './runs.admission';
import type { RunsRequeueStore, RunsStore } from './runs.store';

export interface RunTimeoutSweepOptions {
  runs: Pick<RunsStore, 'timeOut'>;
  requeue: Pick<RunsRequeueStore, 'timedOut'>;
  /** The run's end hook: the pipeline's next pending run, then the workspace's admission. */
  admission: Pick<RunAdmission, 'runEnded'>;
  /** Tells the worker running the run that it ended (the run queue's cancel channel): its step stops at once. */
  announce(runId: string): Promise<void>;
  /** Runs ended per pass. */
  batch: number;
  logger: Logger;
  /** Told of each run this sweeper ended (metrics). */
  onTimedOut?: () => void;
}

/**
 * One pass of the run time limit's backstop (contract section 19): ends `failed` (timeout) every
 * running run past its pipeline's run_timeout_seconds. The worker running a run ends it itself at
 * its deadline (runs.executor.ts); this pass catches the runs whose worker died, stalled or lost
 * its job, so a limit holds within a pass interval whatever became of the worker. Each end is the
 * conditional update of runsStore.timeOut, so a run ended meanwhile by anyone is left alone.
 */
export async function endTimedOutRuns(options: RunTimeoutSweepOptions): Promise<number> {
  let ended = 0;
  for (const candidate of await options.requeue.timedOut(options.batch)) {
    const run = await options.runs.timeOut(candidate.workspaceId, candidate.id);
    if (!run) continue;
    ended++;
    options.onTimedOut?.();
    options.logger.warn({ run_id: run.id, pipeline_id: run.pipelineId, workspace_id: run.workspaceId }, 'run passed its time limit: ended failed (timeout)');
    await options.announce(run.id);
    await options.admission.runEnded({ workspaceId: candidate.workspaceId, pipelineId: candidate.pipelineId });
  }
  return ended;
}

/** endTimedOutRuns every `intervalMs` in every worker; failures are logged and retried next time. */
export function startRunTimeoutSweep(options: RunTimeoutSweepOptions & { intervalMs: number }): { stop(): Promise<void> } {
  const task = runPeriodically(
    async () => {
      await endTimedOutRuns(options);
    },
    {
      firstDelayMs: options.intervalMs,
      intervalMs: options.intervalMs,
      onError: (err) => options.logger.warn({ err: err instanceof Error ? err.message : err }, 'run timeout sweep failed; retrying next period'),
    },
  );
  return { stop: () => task.close() };
}
