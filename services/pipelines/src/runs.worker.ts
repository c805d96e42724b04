import { UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import { z } from 'zod';
import { duplicateRedisConnection, inConsumerSpan, queueKeyPrefix, type Logger, type RedisConnection } from '@platform/core';
import { executeRun, failAbandonedRun, type RunExecutorDeps } from './runs.executor';
import { RUN_CANCELLED, RUN_JOB_NAME, runCancelChannel, RunJob, type RunJobData } from './runs.queue';

export interface RunsWorkerOptions {
  /** Worker connections wait for Redis: the client needs `maxRetriesPerRequest: null`. */
  connection: RedisConnection;
  queueName: string;
  /** The deployment's queue key prefix (QUEUE_PREFIX), the same as the API's. */
  prefix: string;
  concurrency: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  maxStalledCount: number;
  executor: RunExecutorDeps;
  logger: Logger;
  /** Told how each run this worker ended finished (metrics). */
  onOutcome?: (outcome: RunEnd) => void;
  /**
   * Called once a run whose job this worker handled has ended (runs.admission.ts runEnded: its slot
   * goes to the workspace's next waiting run), before the job itself ends, so that the next run's job
   * is in the queue when this worker's slot frees. Must not throw.
   */
  onRunEnded?: (run: RunJob) => Promise<void>;
}

/** How a run whose job this worker ended finished (`cancelled`: while running, or before its job was picked up). */
export type RunEnd = 'succeeded' | 'failed' | 'cancelled';

export interface RunsWorker {
  worker: Worker<RunJobData, void, typeof RUN_JOB_NAME>;
  /** Resolves once the worker listens for cancels (runCancelChannel). */
  cancelsHeard: Promise<void>;
  /** Running runs stop after their current step and go back to the queue; then the worker closes. */
  close(): Promise<void>;
}

/** Parses a job's payload; malformed data fails the job at once, without retries. */
export function parseRunJob(data: unknown): RunJob {
  const parsed = RunJob.safeParse(data);
  if (!parsed.success) throw new UnrecoverableError(`invalid run job payload: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/**
 * The BullMQ worker of the run queue. The processor only parses the payload and calls the domain
 * (executeRun); what BullMQ needs to hear back is translated here.
 */
export function createRunsWorker(options: RunsWorkerOptions): RunsWorker {
  const { logger } = options;
  let stopping = false;

  const run = async (job: Job<RunJobData, void, typeof RUN_JOB_NAME>, token?: string, signal?: AbortSignal): Promise<void> => {
    const runJob = parseRunJob(job.data);
    logger.info({ run_id: runJob.run_id, pipeline_id: runJob.pipeline_id }, 'run job taken');
    const outcome = await executeRun(options.executor, runJob, {
      stopping: () => stopping,
      signal: signal ?? new AbortController().signal,
    });
    if (outcome === 'succeeded' || outcome === 'failed' || outcome === 'cancelled') options.onOutcome?.(outcome);
    // 'skipped': ended before this pick-up (e.g. cancelled by the API, whose own admission may have failed).
    if (outcome === 'succeeded' || outcome === 'failed' || outcome === 'cancelled' || outcome === 'skipped') await options.onRunEnded?.(runJob);
    // Not "completed": the run did not complete. Failed without retries, as BullMQ's own cancellation ends a job.
    if (outcome === 'cancelled') throw new UnrecoverableError(RUN_CANCELLED);
    if (outcome === 'released') {
      // Back to the queue without using up a retry; another worker continues the run.
      await job.moveToWait(token);
      throw new WaitingError();
    }
    // The run row already says failed (with its error); the job fails too, without a retry.
    if (outcome === 'failed') throw new UnrecoverableError('the run failed');
  };

  // Each pick-up of the job is a span in the trigger's trace (RunJob.traceparent).
  const processor = (job: Job<RunJobData, void, typeof RUN_JOB_NAME>, token?: string, signal?: AbortSignal): Promise<void> =>
    inConsumerSpan(
      '@platform/pipelines-worker',
      'pipeline run',
      {
        parent: (job.data as { traceparent?: unknown } | null)?.traceparent,
        attributes: {
          'messaging.system': 'bullmq',
          'messaging.destination.name': options.queueName,
          'messaging.message.id': job.id ?? '',
          'platform.attempts_made': job.attemptsMade,
        },
      },
      () => run(job, token, signal),
    );

  const worker = new Worker<RunJobData, void, typeof RUN_JOB_NAME>(options.queueName, processor, {
    connection: options.connection,
    prefix: queueKeyPrefix(options.prefix, options.queueName),
    concurrency: options.concurrency,
    lockDuration: options.lockDurationMs,
    stalledInterval: options.stalledIntervalMs,
    maxStalledCount: options.maxStalledCount,
    // The caller starts it (worker.run()) once the database answers.
    autorun: false,
  });

  worker.on('failed', (job, err) => {
    if (!job || err.message === RUN_CANCELLED) return;
    const final = err.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
    if (!final) return;
    const parsed = RunJob.safeParse(job.data);
    if (!parsed.success) {
      logger.error({ job_id: job.id, reason: err.message }, 'malformed run job failed');
      return;
    }
    failAbandonedRun(options.executor, parsed.data, err.message).then(
      async (failed) => {
        if (!failed) return;
        options.onOutcome?.('failed');
        await options.onRunEnded?.(parsed.data);
      },
      (failErr: unknown) => logger.error({ err: failErr, run_id: parsed.data.run_id }, 'could not mark the abandoned run failed'),
    );
  });
  worker.on('stalled', (jobId) => logger.warn({ job_id: jobId }, 'run job stalled; it goes back to the queue'));
  worker.on('error', (err) => logger.error({ err }, 'runs worker error'));

  // The API announces each cancel (runs.queue.ts runCancelChannel): the worker running that run aborts its step at once.
  // ioredis subscribes again after a reconnect; a cancel announced meanwhile is seen at the run's next step.
  const subscriber = duplicateRedisConnection(options.connection);
  subscriber.on('error', (err: Error) => logger.warn({ err: err.message }, 'runs cancel subscriber: Redis error'));
  subscriber.on('message', (_channel: string, runId: string) => {
    if (worker.cancelJob(runId, RUN_CANCELLED)) logger.info({ run_id: runId }, 'run cancelled: stopping its step');
  });
  const cancelsHeard = subscriber.subscribe(runCancelChannel(options.prefix, options.queueName)).then(() => undefined);
  cancelsHeard.catch((err: unknown) => logger.error({ err }, 'runs cancel subscriber: could not subscribe; cancels are seen between steps only'));

  let closing: Promise<void> | undefined;
  return {
    worker,
    cancelsHeard,
    close() {
      stopping = true;
      closing ??= (async () => {
        await worker.close();
        await subscriber.quit().catch(() => subscriber.disconnect());
      })();
      return closing;
    },
  };
}
