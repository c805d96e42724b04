import type { Logger } from '@platform/core';
import { admittedRunJob, type RunAdmission } from './runs.admission';
import { addRunJob, type RunsQueue } from './runs.queue';
import type { RunsRequeueStore } from './runs.store';

export interface RunRequeueOptions {
  queue: RunsQueue;
  runs: RunsRequeueStore;
  /** The worker's admission (runs.admission.ts), for workspaces whose waiting runs nobody admitted. */
  admission: RunAdmission;
  /** PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS: only workspaces below it are admitted for. */
  maxActiveRuns: number;
  /** Only runs admitted at least this long ago are looked at: the admitter adds a job right after its commit. */
  afterMs: number;
  intervalMs: number;
  backoffMs: number;
  logger: Logger;
  /** Runs, and workspaces, looked at per pass. */
  batch?: number;
}

/** What one pass did. */
export interface RequeuePass {
  /** Admitted runs whose lost job was added again. */
  requeued: number;
  /** Runs admitted for workspaces that had waiting runs and free slots. */
  admitted: number;
  /** Pipelines whose pending runs waited with nothing of them queued or running (contract section 19), given their next run. */
  unstranded: number;
}

/**
 * The backstop of run admission and of the queue. (a) Gives a job back to every run admitted and
 * still `queued` with no job in this queue: the API answers 202 only after the run row is committed
 * and, when admitted, its job added; a Redis that comes back without its data (no persistence,
 * failover to an empty replica) loses the job, an admitter may fail to add it, and without this the
 * run would stay queued for good, holding its workspace's slot and blocking its pipeline. (c) Promotes
 * the next pending run of every active pipeline whose pending runs wait with nothing queued or
 * running before them (contract section 19). (b) Admits for every workspace that has waiting runs
 * and free slots: a process that died between a run's end and the admission after it must not
 * strand them. A re-add is safe: the job id is the run id (an
 * existing job makes the add a no-op) and the worker takes a run only through the conditional
 * queued → running update. Runs never carry their queue's name, so one queue per database is
 * assumed (as deployed: one worker Deployment per pipelines database).
 */
export async function requeueLostRuns(options: RunRequeueOptions): Promise<RequeuePass> {
  const batch = options.batch ?? 100;
  const stale = await options.runs.staleAdmitted(new Date(Date.now() - options.afterMs), batch);
  let requeued = 0;
  for (const run of stale) {
    if (await options.queue.getJob(run.id)) continue;
    await addRunJob(options.queue, admittedRunJob(run), run.priority, options.backoffMs);
    requeued++;
    options.logger.warn({ run_id: run.id, pipeline_id: run.pipelineId }, 'run was admitted without a job (Redis lost it): job added again');
  }
  // (c) A process that died between a run's end and the promotion after it must not strand the pending runs behind it.
  const stranded = await options.runs.pipelinesWithStrandedPending(batch);
  for (const pipeline of stranded) {
    options.logger.info(
      { workspace_id: pipeline.workspaceId, pipeline_id: pipeline.pipelineId },
      'pending runs with no run before them: the next one is started by the requeue',
    );
    await options.admission.startPending(pipeline);
  }
  let admitted = 0;
  for (const workspaceId of await options.runs.workspacesAwaitingAdmission(options.maxActiveRuns, batch)) {
    const result = await options.admission.admit(workspaceId);
    admitted += result.admitted.length;
    if (result.admitted.length > 0) {
      options.logger.info({ workspace_id: workspaceId, run_ids: result.admitted.map((r) => r.id) }, 'runs waiting beside free slots admitted by the requeue');
    }
  }
  return { requeued, admitted, unstranded: stranded.length };
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
