import { Queue, type JobsOptions } from 'bullmq';
import { z } from 'zod';
import { queueKeyPrefix, TraceParent, Uuid, type Logger, type RedisConnection, type WorkspaceId } from '@platform/core';

/**
 * The run queue's contract, shared by the producer (the API) and the worker: queue name, job
 * name, payload schema and job options. Both sides are typed from here; the worker re-parses
 * every payload with RunJob and fails a malformed one without retrying.
 */

export const DEFAULT_RUNS_QUEUE = 'pipeline-runs';

/** BullMQ keys are `<prefix>:<queue>:...`, so a queue name must not contain ':'. */
export const QueueName = z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be 1-100 characters of A-Z a-z 0-9 _ . -');

export const RUN_JOB_NAME = 'run';

/**
 * Worker pick-ups of one run, whatever ended them (an error, a crash): the contract's "at most 3
 * attempts". BullMQ's own `attempts` counts only thrown errors, so the worker also enforces this
 * on the run row (see startRunAttempt).
 */
export const MAX_RUN_ATTEMPTS = 3;

// A field this version does not know is dropped, not refused: a producer one version ahead (a rolling
// upgrade) may add one, and its job must still run here. A missing or malformed field still fails.
export const RunJob = z.object({
  run_id: Uuid,
  // The producer took it from the gateway-signed identity, so it is a trusted workspace id.
  workspace_id: Uuid.transform((id) => id as WorkspaceId),
  pipeline_id: Uuid,
  /**
   * The trigger's span (tracing on): every pick-up of the run, retries and hand-backs included, is a
   * child of it, so one run is one trace from the trigger to its end. Scheduled and re-added runs have none.
   */
  traceparent: TraceParent.optional(),
});
/** The payload as the worker sees it after parsing. */
export type RunJob = z.output<typeof RunJob>;
/** The payload as stored in Redis. */
export type RunJobData = z.input<typeof RunJob>;

export type RunsQueue = Queue<RunJobData, void, typeof RUN_JOB_NAME>;

/**
 * The failedReason of a cancelled run's job. BullMQ's own cancellation ends a job failed with an
 * UnrecoverableError: the job did not complete, it is not retried, and the reason says why.
 */
export const RUN_CANCELLED = 'run cancelled';

/**
 * The Redis pub/sub channel on which the API tells the workers of one queue that a run was
 * cancelled (the message is the run id, which is the job id): the worker running it aborts its
 * step at once (BullMQ's `worker.cancelJob`). A message lost while a worker reconnects costs
 * only promptness: every step also checks the run row.
 */
export function runCancelChannel(prefix: string, queueName: string): string {
  return `${prefix}:${queueName}:cancelled`;
}

/**
 * Ended jobs are only traces for operators: the run row holds the status, stats and error. Both
 * are capped by age and count, so a burst of runs or failures cannot grow the Redis that also
 * holds rate limits and webhook deliveries: a job is a few hundred bytes, so 10,000 of each state
 * stays around 5 MB. A failed job (failed or cancelled run) is kept a week for debugging; no
 * job id is needed after its run ended (the requeue re-adds only runs still `queued`).
 */
const KEEP_COMPLETED = { age: 24 * 3600, count: 10_000 };
const KEEP_FAILED = { age: 7 * 24 * 3600, count: 10_000 };

/**
 * One job per run (jobId = run id, so a repeated add is a no-op); retries back off exponentially.
 * `priority` comes from the run's admission (runs.admission.ts); every run job has one (>= 1):
 * BullMQ serves jobs without a priority before all prioritized ones, so one job without would jump
 * every workspace's queue.
 */
export function runJobOptions(runId: string, backoffMs: number, priority: number): JobsOptions {
  if (!Number.isInteger(priority) || priority < 1) throw new RangeError(`a run job's priority must be an integer >= 1, not ${priority}`);
  return {
    jobId: runId,
    priority,
    attempts: MAX_RUN_ATTEMPTS,
    backoff: { type: 'exponential', delay: backoffMs },
    removeOnComplete: KEEP_COMPLETED,
    removeOnFail: KEEP_FAILED,
  };
}

/** Raised when Redis does not accept a job; the API answers 503. */
export class QueueUnavailableError extends Error {
  override name = 'QueueUnavailableError';
}

/** Adds an admitted run's job (the worker's side: scheduler, requeue, admission after a run ended). */
export async function addRunJob(queue: RunsQueue, job: RunJobData, priority: number, backoffMs: number): Promise<void> {
  await queue.add(RUN_JOB_NAME, job, runJobOptions(job.run_id, backoffMs, priority));
}

export interface RunsProducer {
  /** Adds an admitted run's job with its admission priority; throws QueueUnavailableError when Redis does not take it. */
  enqueue(job: RunJobData, priority: number): Promise<void>;
  /** Tells the workers the run was cancelled (runCancelChannel); never throws: the worker's step check is the fallback. */
  cancelled(runId: string): Promise<void>;
  /** Resolves when Redis answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Fails fast when Redis is down: the caller's client must have `enableOfflineQueue: false`, an
 * add is refused at once while the client is not connected, and bounded by `timeoutMs` otherwise
 * (BullMQ waits for a first connection that may never come).
 */
export function createRunsProducer(options: {
  redis: RedisConnection;
  queueName: string;
  /** The deployment's queue key prefix (QUEUE_PREFIX), the same as the worker's. */
  prefix: string;
  backoffMs: number;
  timeoutMs: number;
  logger: Logger;
}): RunsProducer {
  const { redis, logger } = options;
  const queue: RunsQueue = new Queue<RunJobData, void, typeof RUN_JOB_NAME>(options.queueName, {
    connection: redis,
    prefix: queueKeyPrefix(options.prefix, options.queueName),
  });
  queue.on('error', (err) => logger.warn({ err }, 'runs queue error'));
  const cancelChannel = runCancelChannel(options.prefix, options.queueName);
  return {
    async enqueue(job, priority) {
      const data = RunJob.parse(job);
      if (redis.status !== 'ready') throw new QueueUnavailableError(`redis is ${redis.status}`);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new QueueUnavailableError(`redis did not accept the job within ${options.timeoutMs} ms`)), options.timeoutMs);
      });
      try {
        await Promise.race([queue.add(RUN_JOB_NAME, { ...data }, runJobOptions(data.run_id, options.backoffMs, priority)), timeout]);
      } catch (err) {
        if (err instanceof QueueUnavailableError) throw err;
        throw new QueueUnavailableError((err as Error).message, { cause: err });
      } finally {
        clearTimeout(timer);
      }
    },
    async cancelled(runId) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
      });
      try {
        await Promise.race([redis.publish(cancelChannel, runId), timeout]);
      } catch (err) {
        logger.warn({ err, run_id: runId }, 'could not announce the cancel; the worker sees it at its next step');
      } finally {
        clearTimeout(timer);
      }
    },
    async ping() {
      await redis.ping();
    },
    close: () => queue.close(),
  };
}
