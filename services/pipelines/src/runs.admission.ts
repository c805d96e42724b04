import { z } from 'zod';
import { registeredCounter, type Counter, type Logger, type Registry, type WorkspaceId } from '@platform/core';
import type { RunJobData } from './runs.queue';

/**
 * Fair run scheduling (contract section 20). A run is created `queued` without a job; it gets its
 * job only when admitted, and a workspace has at most PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS runs
 * admitted or running at once. Each admitted job carries a BullMQ priority that is its place
 * among its workspace's admitted and running runs (1 for a workspace's first, 2 for its second,
 * ...); BullMQ serves lower numbers first, so a free worker slot takes the run of the workspace
 * that holds the fewest slots, and a workspace with a backlog never stands before another's first run.
 */

/** The contract's default of PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS. */
export const DEFAULT_WORKSPACE_MAX_ACTIVE_RUNS = 10;
/** The highest setting: a job's priority is at most this, far below BullMQ's limit (2^21 - 1). */
export const MAX_WORKSPACE_MAX_ACTIVE_RUNS = 1_000;

/** PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS, read by the API and the worker alike (they must agree). */
export const WorkspaceMaxActiveRuns = z.coerce.number().int().min(1).max(MAX_WORKSPACE_MAX_ACTIVE_RUNS).default(DEFAULT_WORKSPACE_MAX_ACTIVE_RUNS);

/** How many waiting runs a workspace that holds `held` slots may have admitted now. */
export function freeSlots(held: number, maxActiveRuns: number): number {
  return Math.max(0, maxActiveRuns - held);
}

/**
 * The BullMQ priority of the `index`-th (0-based) run admitted in one admission of a workspace that
 * held `held` slots before it: 1 + the runs of its workspace admitted before it and still active.
 * Never 0: BullMQ serves jobs without a priority before every prioritized one.
 */
export function admissionPriority(held: number, index: number): number {
  return held + index + 1;
}

/**
 * `pipeline_runs_admitted_total`: runs this process admitted (the API at triggers and cancels, a
 * worker at run ends, ticks and its requeue). No workspace label: workspaces are unbounded.
 */
export function admittedRunsCounter(registry: Registry): Counter {
  const counter = registeredCounter(registry, 'pipeline_runs_admitted_total', 'Runs this process admitted to the run queue under their workspace cap.', []);
  counter.inc(0);
  return counter;
}

/** A run the admission gave a slot: its job is to be added with `priority`. */
export interface AdmittedRun {
  id: string;
  workspaceId: WorkspaceId;
  pipelineId: string;
  priority: number;
}

/** The job payload of an admitted run. */
export function admittedRunJob(run: AdmittedRun, traceparent?: string): RunJobData {
  return { run_id: run.id, workspace_id: run.workspaceId, pipeline_id: run.pipelineId, ...(traceparent ? { traceparent } : {}) };
}

export interface RunAdmissionDeps {
  /** runsStore(db).admit: marks the oldest waiting runs admitted, up to the free slots. */
  admit(workspaceId: WorkspaceId, maxActiveRuns: number, now: Date): Promise<AdmittedRun[]>;
  /** Adds one run's job with its priority; throws when Redis does not take it. */
  enqueue(job: RunJobData, priority: number): Promise<void>;
  /**
   * runsStore(db).promoteNext (contract section 19): the pipeline's first pending run becomes queued
   * when nothing of the pipeline is queued or running; true when one was. Absent: no pending runs.
   */
  promote?(pipeline: { workspaceId: WorkspaceId; pipelineId: string }, now: Date): Promise<boolean>;
  /** PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS. */
  maxActiveRuns: number;
  logger: Logger;
  /** Told how many runs each admission admitted (metrics). */
  onAdmitted?: (count: number) => void;
}

export interface AdmissionResult {
  admitted: AdmittedRun[];
  /**
   * Admitted runs whose job could not be added (Redis away): they keep their slot and the requeue
   * (runs.requeue.ts) adds their jobs later. After the first failed add the rest are not tried.
   */
  notEnqueued: AdmittedRun[];
}

export interface RunAdmission {
  /**
   * Admits the workspace's oldest waiting runs up to its free slots and adds their jobs, in priority
   * order. `traced`: the run whose job carries the caller's trace (the API's own trigger).
   */
  admit(workspaceId: WorkspaceId, traced?: { runId: string; traceparent: string | undefined }): Promise<AdmissionResult>;
  /**
   * THE hook of a run's end, whoever ended it (a worker, the API's cancel, an abandoned job): its
   * slot is free, so the workspace's next waiting run is admitted. Never throws: a failure is
   * logged and the requeue admits later.
   */
  runEnded(run: { workspaceId: WorkspaceId; pipelineId: string }): Promise<void>;
  /**
   * The pipeline's next pending run may start (contract section 19: a run ended, a pending run was
   * added, the pipeline was resumed): it becomes queued if nothing of the pipeline is queued or
   * running, then the workspace's waiting runs are admitted, the promoted one like any queued run.
   * Never throws: a failure is logged and the requeue promotes and admits later.
   */
  startPending(pipeline: { workspaceId: WorkspaceId; pipelineId: string }): Promise<void>;
}

export function runAdmission(deps: RunAdmissionDeps): RunAdmission {
  async function admit(workspaceId: WorkspaceId, traced?: { runId: string; traceparent: string | undefined }): Promise<AdmissionResult> {
    const admitted = await deps.admit(workspaceId, deps.maxActiveRuns, new Date());
    if (admitted.length > 0) deps.onAdmitted?.(admitted.length);
    for (const [index, run] of admitted.entries()) {
      try {
        await deps.enqueue(admittedRunJob(run, run.id === traced?.runId ? traced.traceparent : undefined), run.priority);
      } catch (err) {
        const notEnqueued = admitted.slice(index);
        deps.logger.warn(
          { err: (err as Error).message, workspace_id: workspaceId, run_ids: notEnqueued.map((r) => r.id) },
          'admitted runs could not be queued; the requeue adds their jobs later',
        );
        return { admitted, notEnqueued };
      }
    }
    return { admitted, notEnqueued: [] };
  }

  async function startPending(pipeline: { workspaceId: WorkspaceId; pipelineId: string }): Promise<void> {
    try {
      // The promotion first: the run it makes queued is admitted by the admission right after it.
      await deps.promote?.(pipeline, new Date());
    } catch (err) {
      deps.logger.warn(
        { err: (err as Error).message, workspace_id: pipeline.workspaceId, pipeline_id: pipeline.pipelineId },
        'pending run not promoted; the requeue promotes it later',
      );
    }
    try {
      await admit(pipeline.workspaceId);
    } catch (err) {
      deps.logger.warn({ err: (err as Error).message, workspace_id: pipeline.workspaceId }, 'admission after a run ended failed; the requeue admits later');
    }
  }

  return {
    admit,
    // Contract section 19 (pending runs): the pipeline's next pending run becomes queued here, before the admission.
    runEnded: startPending,
    startPending,
  };
}
