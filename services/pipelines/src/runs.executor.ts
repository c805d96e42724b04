import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import { isTransientBackendError, type Logger } from '@platform/core';
import {
  ConnectorError,
  RunNotHeldError,
  destinationConnector,
  sourceConnector,
  type ConnectorRuntime,
  type DestinationWriter,
  type SourceRecord,
  type ValidRecord,
} from './connectors';
import { MAX_RUN_ATTEMPTS, type RunJob } from './runs.queue';
import type { Run, RunFailure, RunsStore, RunStats } from './runs.store';
import type { Pipeline } from './pipelines.store';

export interface RunExecutorDeps {
  runs: RunsStore;
  runtime: ConnectorRuntime;
  batchSize: number;
  /** A pause inside every step (tests: time to cancel, SIGTERM or SIGKILL between steps). */
  stepDelayMs: number;
  logger: Logger;
}

export interface RunControl {
  /** True once the process shuts down: stop after the current step and hand the run back. */
  stopping(): boolean;
  /**
   * Aborted when the run is cancelled while this worker runs it (the API's cancel message makes
   * the worker call BullMQ's cancelJob): the step in progress stops at once. A worker that lost
   * its job's lock is stopped by the attempt fencing instead.
   */
  signal: AbortSignal;
}

/**
 * How an attempt ended: the run `succeeded` or `failed`; it was `cancelled` (while running, or
 * before its job was picked up); it `stopped` because it is no longer this attempt's (replaced
 * after this worker lost it); it was `released` at shutdown for another worker to continue; or it
 * was `skipped` (already ended otherwise when picked up).
 */
export type RunOutcome = 'succeeded' | 'failed' | 'cancelled' | 'stopped' | 'released' | 'skipped';

/** A failure that another attempt may get past; the queue retries the job with backoff. */
export class RetryableRunError extends Error {
  override name = 'RetryableRunError';
}

const MAX_ID_LENGTH = 512;

/** Every record must be a JSON object with a string or integer `id`; it becomes the destination key. */
export function validateRecords(batch: SourceRecord[], offset: number): ValidRecord[] {
  return batch.map((record, index) => {
    const position = offset + index + 1;
    if (record === null || typeof record !== 'object' || Array.isArray(record)) {
      throw new ConnectorError('invalid_record', `record ${position} is not a JSON object`, false);
    }
    const id = record.id;
    if (typeof id === 'string' && id.length > 0 && id.length <= MAX_ID_LENGTH) return { id, data: record };
    if (typeof id === 'number' && Number.isSafeInteger(id)) return { id: String(id), data: record };
    throw new ConnectorError('invalid_record', `record ${position} has no id (a non-empty string or an integer)`, false);
  });
}

function failureOf(err: unknown): RunFailure & { retryable: boolean } {
  if (err instanceof ConnectorError) return { code: err.code, message: err.message, retryable: err.retryable };
  return {
    code: 'internal_error',
    message: isTransientBackendError(err) ? 'A backend of the platform was briefly unreachable.' : 'The run failed on our side.',
    retryable: true,
  };
}

/** The stored config, parsed again (defaults, and a config stored before a schema change fails cleanly). */
function storedConfig(connector: { name: string; config: z.ZodType }, stored: unknown, code: 'source_error' | 'destination_error'): unknown {
  const parsed = connector.config.safeParse(stored);
  if (!parsed.success) throw new ConnectorError(code, `the stored ${connector.name} config is no longer valid; create the pipeline again`, false);
  return parsed.data;
}

/** Why this attempt no longer holds its run: the run was cancelled, or another attempt replaced this one. */
async function lostRun(deps: RunExecutorDeps, job: RunJob): Promise<'cancelled' | 'stopped'> {
  const run = await deps.runs.find(job.workspace_id, job.pipeline_id, job.run_id);
  return run?.status === 'cancelled' ? 'cancelled' : 'stopped';
}

async function copyRecords(
  deps: RunExecutorDeps,
  job: RunJob,
  run: Run,
  pipeline: Pipeline,
  attempt: number,
  control: RunControl,
): Promise<'succeeded' | 'cancelled' | 'stopped' | 'released'> {
  const workspaceId = job.workspace_id;
  const source = sourceConnector(pipeline.sourceConnector);
  const destination = destinationConnector(pipeline.destinationConnector);
  const sourceConfig = storedConfig(source, pipeline.sourceConfig, 'source_error');
  const destinationConfig = storedConfig(destination, pipeline.destinationConfig, 'destination_error');
  // A dry run reads and validates, and never touches the destination.
  const writer: DestinationWriter | null = run.dryRun ? null : await destination.open(destinationConfig, { workspaceId, runtime: deps.runtime });
  const stats: RunStats = { recordsRead: 0, recordsWritten: 0 };
  let step = 0;
  try {
    const batches = source.read(sourceConfig, { since: run.since, batchSize: deps.batchSize, signal: control.signal, runtime: deps.runtime });
    for await (const batch of batches) {
      // One step: validate a batch, write it, record the progress; shutdown is seen here, a cancel here or as soon as it is announced.
      const records = validateRecords(batch, stats.recordsRead);
      if (deps.stepDelayMs > 0) await sleep(deps.stepDelayMs, undefined, { signal: control.signal });
      // A cancel announced during this step stops it before it writes.
      control.signal.throwIfAborted();
      // Each batch commits only while this attempt holds the run: nothing lands after a cancel or a timeout.
      if (writer)
        stats.recordsWritten += await writer.write(records, {
          signal: control.signal,
          commitWhileHeld: (commit) => deps.runs.whileHeld(workspaceId, run.id, attempt, commit),
        });
      stats.recordsRead += records.length;
      step += 1;
      if (!(await deps.runs.recordProgress(workspaceId, run.id, attempt, stats, step))) return lostRun(deps, job);
      if (control.stopping()) {
        await deps.runs.release(workspaceId, run.id, attempt, stats);
        return 'released';
      }
    }
  } finally {
    await writer?.close();
  }
  return (await deps.runs.succeed(workspaceId, run.id, attempt, stats, new Date())) ? 'succeeded' : lostRun(deps, job);
}

/**
 * The run's time limit (contract section 19) while an attempt runs: at `started_at` +
 * run_timeout_seconds it ends the run `failed` (runsStore.timeOut, a conditional update whoever
 * else tries it) and aborts `signal`, so the step in flight stops at once. Its signal is aborted
 * too when the run turns out to have ended otherwise. stop() ends the watch and tells whether this
 * watch ended the run.
 */
function watchDeadline(deps: RunExecutorDeps, job: RunJob, run: Run, pipeline: Pipeline): { signal: AbortSignal | null; stop(): Promise<boolean> } {
  if (pipeline.runTimeoutSeconds === null || run.startedAt === null) return { signal: null, stop: () => Promise.resolve(false) };
  const controller = new AbortController();
  const deadline = run.startedAt.getTime() + pipeline.runTimeoutSeconds * 1000;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let check: Promise<boolean> = Promise.resolve(false);
  const arm = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      check = fire();
    }, ms);
  };
  const fire = async (): Promise<boolean> => {
    try {
      if (await deps.runs.timeOut(job.workspace_id, job.run_id)) {
        controller.abort(new RunTimedOutError(`the run passed its limit of ${pipeline.runTimeoutSeconds} s`));
        return true;
      }
      const current = await deps.runs.find(job.workspace_id, job.pipeline_id, job.run_id);
      // Still running: the database's clock is a little behind this one; look again shortly.
      if (current?.status === 'running') arm(100);
      else controller.abort(new RunTimedOutError('the run ended'));
    } catch (err) {
      deps.logger.warn({ err: (err as Error).message, run_id: job.run_id }, 'run timeout not applied; trying again');
      arm(1_000);
    }
    return false;
  };
  arm(Math.max(0, deadline - Date.now()));
  return {
    signal: controller.signal,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      return check;
    },
  };
}

/** The reason of a run's signal aborted by its time limit. */
export class RunTimedOutError extends Error {
  override name = 'RunTimedOutError';
}

/**
 * One attempt of a run, as the worker's processor calls it: pick the run up, copy its records
 * step by step, and end it. A retryable failure before the last attempt is thrown as
 * RetryableRunError for the queue to retry; any other failure ends the run `failed`. A run past its
 * time limit ends `failed` (timeout) whatever the attempt was doing.
 */
export async function executeRun(deps: RunExecutorDeps, job: RunJob, control: RunControl): Promise<RunOutcome> {
  const { workspace_id: workspaceId, run_id: runId } = job;
  const started = await deps.runs.startAttempt(workspaceId, runId, MAX_RUN_ATTEMPTS, new Date());
  if (started.kind === 'inactive') return started.status === 'cancelled' ? 'cancelled' : 'skipped';
  if (started.kind === 'exhausted') {
    // The earlier attempts all ended without a word (their workers died or lost the job).
    await deps.runs.fail(
      workspaceId,
      runId,
      { code: 'attempts_exhausted', message: `The run was interrupted ${MAX_RUN_ATTEMPTS} times (its worker stopped).` },
      new Date(),
    );
    return 'failed';
  }
  const deadline = watchDeadline(deps, job, started.run, started.pipeline);
  const signal = deadline.signal ? AbortSignal.any([control.signal, deadline.signal]) : control.signal;
  const log = deps.logger.child({ run_id: runId, workspace_id: workspaceId, attempt: started.attempt });
  try {
    const outcome = await runAttempt(deps, job, started, { stopping: () => control.stopping(), signal }, log);
    // This attempt's watch ended the run (timeout), whatever the attempt saw of it.
    return (await deadline.stop()) ? timedOut(log) : outcome;
  } catch (err) {
    if (await deadline.stop()) return timedOut(log);
    throw err;
  }
}

function timedOut(log: Logger): 'failed' {
  log.info({ outcome: 'failed', reason: 'timeout' }, 'run attempt ended');
  return 'failed';
}

async function runAttempt(
  deps: RunExecutorDeps,
  job: RunJob,
  { run, pipeline, attempt }: { run: Run; pipeline: Pipeline; attempt: number },
  control: RunControl,
  log: Logger,
): Promise<RunOutcome> {
  const { workspace_id: workspaceId, run_id: runId } = job;
  try {
    const outcome = await copyRecords(deps, job, run, pipeline, attempt, control);
    log.info({ outcome }, 'run attempt ended');
    return outcome;
  } catch (err) {
    // Aborted (a cancel, the time limit) or refused a commit: whether the run is still this
    // attempt's decides. A signal with the run still held is an interruption, retried below.
    if (control.signal.aborted || err instanceof RunNotHeldError) {
      const current = await deps.runs.find(workspaceId, job.pipeline_id, runId);
      if (current?.status === 'cancelled') {
        log.info({ outcome: 'cancelled' }, 'run attempt ended');
        return 'cancelled';
      }
      if (current?.status !== 'running' || current.attempts !== attempt) {
        log.info({ outcome: 'stopped', status: current?.status }, 'run attempt ended');
        return 'stopped';
      }
    }
    const failure = failureOf(err);
    if (failure.retryable && attempt < MAX_RUN_ATTEMPTS) {
      log.warn({ err }, 'run attempt failed; the queue retries it');
      // The retry's log line (only while this attempt still holds the run); the job is retried either way.
      await deps.runs
        .recordRetry(workspaceId, runId, attempt, { code: failure.code, message: failure.message })
        .catch((logErr: unknown) => log.warn({ err: logErr }, 'retry log line not written'));
      throw new RetryableRunError(failure.message, { cause: err });
    }
    log.warn({ err }, 'run failed');
    await deps.runs.fail(workspaceId, runId, { code: failure.code, message: failure.message }, new Date(), attempt);
    return 'failed';
  }
}

/**
 * The queue gave up on a job without the processor ending its run (a job stalled too often, or
 * its last attempt threw before it could record the failure): the run must not stay active.
 */
export async function failAbandonedRun(deps: Pick<RunExecutorDeps, 'runs'>, job: RunJob, reason: string): Promise<boolean> {
  // BullMQ fails a job that stalled more often than maxStalledCount with a message saying so.
  const failure = /stalled/i.test(reason)
    ? { code: 'worker_lost', message: 'The run was interrupted too often (its worker stopped).' }
    : { code: 'internal_error', message: 'The run failed on our side.' };
  // False when the run had already ended (e.g. the processor failed it first).
  return (await deps.runs.fail(job.workspace_id, job.run_id, failure, new Date())) !== null;
}
