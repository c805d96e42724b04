import { conflict, currentTraceparent, invalidRequest, notFound, temporarilyUnavailable, type Cursor, type Logger, type WorkspaceId } from '@platform/core';
import { MAX_PENDING_RUNS } from './pipelines.resources';
import type { PipelinesStore } from './pipelines.store';
import type { RunAdmission } from './runs.admission';
import type { RunsProducer } from './runs.queue';
import type { RunLogsStore } from './run-logs.store';
import type { Run, RunsStore, RunStatus, RunTrigger } from './runs.store';

export interface RunsContext {
  runs: RunsStore;
  logs: RunLogsStore;
  pipelines: PipelinesStore;
  producer: RunsProducer;
  /** Admission under the workspace's cap of active runs (contract section 20), adding jobs through `producer`. */
  admission: RunAdmission;
  logger: Logger;
}

export interface TriggerInput {
  trigger: RunTrigger;
  /** undefined: since the last succeeded run; null: everything. */
  since: Date | null | undefined;
  dryRun: boolean;
  /** The run a retry retries (contract section 19). */
  retryOf?: string;
}

/** What a retry may retry (contract section 19). */
const RETRYABLE: RunStatus[] = ['failed', 'cancelled'];

function pipelinePaused() {
  return invalidRequest(
    [{ in: 'body', field: '', code: 'pipeline_paused', message: 'the pipeline is paused; resume it to run it' }],
    'The pipeline is paused.',
  );
}

function tooManyPending() {
  return conflict('The pipeline already has the most pending runs it may have.', { max_pending_runs: MAX_PENDING_RUNS }, [
    { in: 'body', field: '', code: 'too_many_pending', message: `a pipeline has at most ${MAX_PENDING_RUNS} pending runs` },
  ]);
}

/**
 * Inserts the run, `queued`, or `pending` behind the active run under the enqueue policy: 404
 * unknown pipeline, 400 paused, 409 with active_run_id when a run is active (reject policy), 409
 * too_many_pending. The insert decides; a refusal whose reason has gone by the time it is explained
 * (the active run ended) tries again.
 */
async function insertRun(ctx: RunsContext, workspaceId: WorkspaceId, pipelineId: string, input: TriggerInput, now: Date): Promise<Run> {
  for (let tries = 0; tries < 3; tries++) {
    const result = await ctx.runs.create(workspaceId, pipelineId, input, now);
    switch (result.kind) {
      case 'created':
        return result.run;
      case 'not_found':
        throw notFound('Pipeline');
      case 'paused':
        throw pipelinePaused();
      case 'too_many_pending':
        throw tooManyPending();
      case 'active':
        if (result.blockingRunId) throw conflict('A run of this pipeline is already active.', { active_run_id: result.blockingRunId });
    }
  }
  throw conflict('The pipeline changed while the run was being created; try again.');
}

/**
 * Queues a run: the row (with run.queued) is committed first, then the workspace's waiting runs are
 * admitted (runs.admission.ts) and the admitted runs' jobs added, this one's (if admitted) with the
 * trigger's trace. A run not admitted (its workspace is at its cap) is answered 202 `queued` all the
 * same and gets its job when a slot frees. When Redis does not take this run's job, the run is marked
 * failed (`enqueue_failed`, with run.failed) so no orphan queued run blocks the pipeline, and the
 * caller gets 503; other runs admitted meanwhile keep their slot and the requeue adds their jobs.
 */
export async function triggerRun(ctx: RunsContext, workspaceId: WorkspaceId, pipelineId: string, input: TriggerInput, now = new Date()): Promise<Run> {
  const run = await insertRun(ctx, workspaceId, pipelineId, input, now);
  if (run.status === 'pending') {
    // The run before it may have ended between the insert's check and its commit: whoever commits last promotes.
    await ctx.admission.startPending({ workspaceId, pipelineId });
    return run;
  }
  let admission;
  try {
    admission = await ctx.admission.admit(workspaceId, { runId: run.id, traceparent: currentTraceparent() });
  } catch (err) {
    // The run is committed and waits for admission like any run beyond the cap: the requeue admits it.
    ctx.logger.warn({ err, run_id: run.id }, 'run queued but its admission failed; the requeue admits it later');
    return run;
  }
  if (admission.notEnqueued.some((admitted) => admitted.id === run.id)) {
    const failed = await ctx.runs
      .fail(workspaceId, run.id, { code: 'enqueue_failed', message: 'The run could not be queued; trigger it again.' }, new Date())
      .catch((failErr: unknown) => {
        ctx.logger.error({ err: failErr, run_id: run.id }, 'queued run left without a job; the requeue adds it later');
        return null;
      });
    // Runs that became pending behind it meanwhile must not wait for it.
    if (failed) await ctx.admission.runEnded({ workspaceId, pipelineId });
    throw temporarilyUnavailable('The run queue is briefly unreachable; retry.');
  }
  return run;
}

/**
 * POST .../runs/{run_id}/retry (contract section 19): a new run with the trigger, since and dry_run
 * of a `failed` or `cancelled` run, and `retry_of` naming it, created as a trigger creates one (its
 * rules hold: paused 400, active 409, the enqueue policy's pending run). 404 unknown run; 409
 * not_retryable for a run in any other state.
 */
export async function retryRun(ctx: RunsContext, workspaceId: WorkspaceId, pipelineId: string, runId: string, now = new Date()): Promise<Run> {
  const original = await getRun(ctx, workspaceId, pipelineId, runId);
  if (!RETRYABLE.includes(original.status)) {
    throw conflict(`Only a failed or cancelled run can be retried; this one is ${original.status}.`, { run_status: original.status }, [
      { in: 'path', field: 'run_id', code: 'not_retryable', message: `the run is ${original.status}; only failed or cancelled runs can be retried` },
    ]);
  }
  return triggerRun(ctx, workspaceId, pipelineId, { trigger: original.trigger, since: original.since, dryRun: original.dryRun, retryOf: original.id }, now);
}

/** After a resume (contract section 19): the pipeline's first pending run starts if nothing of it runs. */
export async function startPendingRuns(ctx: RunsContext, workspaceId: WorkspaceId, pipelineId: string): Promise<void> {
  await ctx.admission.startPending({ workspaceId, pipelineId });
}

export async function getRun(ctx: RunsContext, workspaceId: WorkspaceId, pipelineId: string, runId: string): Promise<Run> {
  const run = await ctx.runs.find(workspaceId, pipelineId, runId);
  if (!run) throw notFound('Run');
  return run;
}

export async function listRuns(
  ctx: RunsContext,
  workspaceId: WorkspaceId,
  pipelineId: string,
  filter: { status?: RunStatus; after?: Cursor; take: number },
): Promise<Run[]> {
  if (!(await ctx.pipelines.find(workspaceId, pipelineId))) throw notFound('Pipeline');
  return ctx.runs.list(workspaceId, pipelineId, filter);
}

/**
 * pending|queued|running → cancelled, then announced to the workers: a running run stops in the step it is
 * in (or, if the announcement is lost, at its next step). 409 once the run has ended.
 */
export async function cancelRun(ctx: RunsContext, workspaceId: WorkspaceId, pipelineId: string, runId: string, now = new Date()): Promise<Run> {
  const cancelled = await ctx.runs.cancel(workspaceId, pipelineId, runId, now);
  if (cancelled) {
    await ctx.producer.cancelled(cancelled.id);
    await ctx.admission.runEnded({ workspaceId, pipelineId });
    return cancelled;
  }
  const run = await getRun(ctx, workspaceId, pipelineId, runId);
  throw conflict(`The run has already ended (${run.status}).`, { run_status: run.status });
}

/** One page of a run's log lines, oldest first; 404 when the pipeline has no such run in the workspace. */
export async function listRunLogs(
  ctx: RunsContext,
  workspaceId: WorkspaceId,
  pipelineId: string,
  runId: string,
  page: { after: Cursor | undefined; take: number },
) {
  await getRun(ctx, workspaceId, pipelineId, runId);
  return ctx.logs.list(workspaceId, runId, page);
}
