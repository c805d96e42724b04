import type { RequestListener } from 'node:http';
import { Queue } from 'bullmq';
import {
  Gauge,
  healthEndpoints,
  queueKeyPrefix,
  Readiness,
  registeredCounter,
  trackQueueDepth,
  type Logger,
  type RedisConnection,
  type Registry,
} from '@platform/core';
import { connectorPolicy } from './connectors';
import type { ConnectorsStore } from './connectors.store';
import { admittedRunsCounter, runAdmission } from './runs.admission';
import { addRunJob, runCancelChannel, type RunsQueue } from './runs.queue';
import { startRunRequeue } from './runs.requeue';
import { startRunRetention } from './runs.retention';
import { startRunTimeoutSweep } from './runs.timeouts';
import type { RunWorkerStores } from './worker.store';
import { startScheduler } from './scheduler';
import { createRunsWorker } from './runs.worker';
import type { WorkerConfig } from './worker.config';

export interface RunWorkerDeps {
  config: WorkerConfig;
  stores: RunWorkerStores;
  /** The worker's connection: waits for Redis (`maxRetriesPerRequest: null`). */
  redis: RedisConnection;
  /** A connection that fails fast, for scrapes and readiness: they never wait for Redis. */
  queueRedis: RedisConnection;
  /** The postgres destination's default database (the pipelines database, one pool shared by all runs). */
  destinations: ConnectorsStore;
  logger: Logger;
  /** Where `pipeline_runs_total{outcome}`, the run queue's `queue_depth` and `platform_dependency_up` go. */
  metrics: Registry;
}

export interface RunWorker {
  /** /healthz and /readyz (contract section 12), to serve on the worker's port. */
  health: RequestListener;
  /** Takes jobs once the database answers, then starts the requeue of lost jobs; logs `worker ready`. */
  start(): Promise<void>;
  /** Stops handing lost runs back to the queue. */
  stopRequeue(): Promise<void>;
  /** Stops the run retention sweeper (the batch in flight commits first). */
  stopRetention(): Promise<void>;
  /** Stops the run timeout sweeper (the pass in flight ends first). */
  stopTimeouts(): Promise<void>;
  /** Stops the scheduler loop (a pass in progress commits or rolls back first). */
  stopScheduler(): Promise<void>;
  /** Running runs finish their current step and are handed back to the queue, then the worker closes. */
  stopRuns(): Promise<void>;
  /** Closes the run queue (read for queue depth and requeue). */
  closeQueue(): Promise<void>;
}

/** The run worker: drains the run queue; deployed apart from the API. Never listens (worker.ts does). */
export function createRunWorker(deps: RunWorkerDeps): RunWorker {
  const { config, stores, logger, metrics } = deps;
  const runtime = deps.destinations.runtime({
    httpTimeoutMs: config.HTTP_JSON_TIMEOUT_MS,
    httpMaxBytes: config.HTTP_JSON_MAX_BYTES,
    ...connectorPolicy(config),
  });

  const runOutcomes = registeredCounter(metrics, 'pipeline_runs_total', 'Runs this worker ended, by outcome.', ['outcome']);
  const outcomeCounters = { succeeded: runOutcomes.labels('succeeded'), failed: runOutcomes.labels('failed'), cancelled: runOutcomes.labels('cancelled') };
  for (const child of Object.values(outcomeCounters)) child.inc(0);
  const pruned = registeredCounter(metrics, 'pipeline_records_pruned_total', 'Rows the run retention sweeper deleted, by table.', ['table']);
  const prunedCounters = { runs: pruned.labels('runs'), run_logs: pruned.labels('run_logs') };
  for (const child of Object.values(prunedCounters)) child.inc(0);
  // Read at scrape time on the fail-fast connection: a scrape never waits for Redis.
  const runsQueue = new Queue(config.PIPELINES_RUNS_QUEUE, {
    connection: deps.queueRedis,
    prefix: queueKeyPrefix(config.QUEUE_PREFIX, config.PIPELINES_RUNS_QUEUE),
  });
  runsQueue.on('error', () => undefined);
  trackQueueDepth(metrics, runsQueue);
  trackAwaitingAdmission(metrics, stores.requeue, logger);

  // Jobs are added on the fail-fast connection: an add while Redis is away fails at once and the requeue adds it later.
  const admitted = admittedRunsCounter(metrics);
  const admission = runAdmission({
    admit: (workspaceId, maxActiveRuns, now) => stores.runs.admit(workspaceId, maxActiveRuns, now),
    promote: async ({ workspaceId, pipelineId }, now) => (await stores.runs.promoteNext(workspaceId, pipelineId, now)) !== null,
    enqueue: (job, priority) => addRunJob(runsQueue as RunsQueue, job, priority, config.PIPELINES_RUN_BACKOFF_MS),
    maxActiveRuns: config.PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS,
    logger,
    onAdmitted: (count) => admitted.inc(count),
  });

  const runs = createRunsWorker({
    connection: deps.redis,
    queueName: config.PIPELINES_RUNS_QUEUE,
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    lockDurationMs: config.WORKER_LOCK_DURATION_MS,
    stalledIntervalMs: config.WORKER_STALLED_INTERVAL_MS,
    maxStalledCount: config.WORKER_MAX_STALLED_COUNT,
    executor: { runs: stores.runs, runtime, batchSize: config.WORKER_BATCH_SIZE, stepDelayMs: config.WORKER_STEP_DELAY_MS, logger },
    logger,
    onOutcome: (outcome) => outcomeCounters[outcome].inc(),
    onRunEnded: (run) => admission.runEnded({ workspaceId: run.workspace_id, pipelineId: run.pipeline_id }),
  });

  // Readiness follows the database only (contract section 12): without Redis the worker waits for it
  // and serves again once it is back; Redis is shown in the body and in platform_dependency_up.
  const readiness = new Readiness({ database: stores.ping, redis: () => deps.queueRedis.ping() }, { registry: metrics, logger });

  let requeue: { stop(): Promise<void> } | undefined;
  let scheduler: { stop(): Promise<void> } | undefined;
  let retention: { stop(): Promise<void> } | undefined;
  let timeouts: { stop(): Promise<void> } | undefined;
  const cancelChannel = runCancelChannel(config.QUEUE_PREFIX, config.PIPELINES_RUNS_QUEUE);

  return {
    health: healthEndpoints(readiness),

    // The first query also loads Prisma's query compiler, which must not happen while a job's lock
    // is waiting to be renewed: jobs are taken only once the database answers.
    async start() {
      for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
        try {
          await stores.ping();
          break;
        } catch (err) {
          logger.warn({ err: (err as Error).message }, 'database not reachable; waiting');
          await new Promise((resolve) => setTimeout(resolve, delay));
        }
      }
      void runs.worker.run().catch((err: unknown) => logger.error({ err }, 'runs worker stopped'));
      await runs.worker.waitUntilReady();
      await runs.cancelsHeard.catch(() => undefined);
      requeue = startRunRequeue({
        queue: runsQueue as RunsQueue,
        runs: stores.requeue,
        admission,
        maxActiveRuns: config.PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS,
        afterMs: config.WORKER_REQUEUE_AFTER_MS,
        intervalMs: config.WORKER_REQUEUE_INTERVAL_MS,
        backoffMs: config.PIPELINES_RUN_BACKOFF_MS,
        logger,
      });
      // Every worker sweeps (SKIP LOCKED gives each its own rows); the first sweep waits a minute, out of start-up.
      retention = startRunRetention({
        store: stores.retention,
        retentionDays: config.PIPELINES_RUN_RETENTION_DAYS,
        batchSize: config.WORKER_RUN_RETENTION_BATCH,
        intervalMs: config.WORKER_RUN_RETENTION_INTERVAL_MS,
        firstDelayMs: Math.min(60_000, config.WORKER_RUN_RETENTION_INTERVAL_MS),
        logger,
        onPruned: (table, count) => prunedCounters[table].inc(count),
      });
      // Every worker sweeps for runs past their time limit (contract section 19): a run whose worker died ends within a pass.
      timeouts = startRunTimeoutSweep({
        runs: stores.runs,
        requeue: stores.requeue,
        admission,
        // Fail-fast and never thrown: a lost announcement only lets the run's step finish (its commit is refused).
        announce: (runId) =>
          deps.queueRedis.publish(cancelChannel, runId).then(
            () => undefined,
            (err: unknown) => logger.warn({ err: (err as Error).message, run_id: runId }, 'timed-out run not announced to its worker'),
          ),
        batch: 100,
        intervalMs: config.WORKER_TIMEOUT_SWEEP_INTERVAL_MS,
        logger,
      });
      // Every worker ticks the schedules (README: which process ticks); the database keeps it to one run per tick.
      if (config.WORKER_SCHEDULER_ENABLED) {
        scheduler = startScheduler({
          store: stores.scheduler,
          admission,
          intervalMs: config.WORKER_SCHEDULER_INTERVAL_MS,
          batch: config.WORKER_SCHEDULER_BATCH,
          logger,
          metrics,
        });
      }
      logger.info(
        {
          queue: config.PIPELINES_RUNS_QUEUE,
          prefix: config.QUEUE_PREFIX,
          concurrency: config.WORKER_CONCURRENCY,
          workspace_max_active_runs: config.PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS,
        },
        'worker ready',
      );
    },

    stopRequeue: () => requeue?.stop() ?? Promise.resolve(),
    stopRetention: () => retention?.stop() ?? Promise.resolve(),
    stopTimeouts: () => timeouts?.stop() ?? Promise.resolve(),
    stopScheduler: () => scheduler?.stop() ?? Promise.resolve(),
    stopRuns: () => runs.close(),
    closeQueue: () => runsQueue.close(),
  };
}

/** Counted up to this at a scrape: the gauge says "at least" beyond it, and a scrape stays cheap. */
const AWAITING_ADMISSION_COUNT_CAP = 100_000;

/**
 * `pipeline_runs_awaiting_admission`: runs `queued` that wait for a slot of their workspace (they
 * have no job yet, so the queue's depth does not show them), all workspaces together, read at
 * scrape time. Absent from a scrape while the database does not answer.
 */
function trackAwaitingAdmission(registry: Registry, store: RunWorkerStores['requeue'], logger: Logger): void {
  new Gauge({
    name: 'pipeline_runs_awaiting_admission',
    help: `Queued runs waiting for a slot of their workspace (PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS), counted up to ${AWAITING_ADMISSION_COUNT_CAP}.`,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        this.set(await store.countAwaitingAdmission(AWAITING_ADMISSION_COUNT_CAP));
      } catch (err) {
        logger.debug({ err: (err as Error).message }, 'runs awaiting admission not counted');
      }
    },
  });
}
