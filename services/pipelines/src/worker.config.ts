import { z } from 'zod';
import { env, CommonConfig } from '@platform/core';
import { ConnectorsConfig } from './connectors/policy';
import { DEFAULT_QUEUE_PREFIX, QueuePrefix } from '@platform/webhooks';
import { WorkspaceMaxActiveRuns } from './runs.admission';
import { DEFAULT_RUNS_QUEUE, QueueName } from './runs.queue';

const int = (min: number, max: number, fallback: number) => z.coerce.number().int().min(min).max(max).default(fallback);

/** The run worker (src/worker.ts), deployed on its own. */
export const WorkerConfig = z.object({
  PIPELINES_DATABASE_URL: env.url('postgresql://postgres@127.0.0.1:5432/platform_pipelines'),
  /**
   * The same database without the transaction-mode pooler (contract section 17); unset:
   * PIPELINES_DATABASE_URL. Nothing of the worker needs a session of its own (its transactions,
   * locks included, are transaction-scoped): read so that the API and the worker take the same variables.
   */
  PIPELINES_DIRECT_DATABASE_URL: env.url().optional(),
  PIPELINES_RUNS_QUEUE: QueueName.default(DEFAULT_RUNS_QUEUE),
  /** The deployment's queue key prefix; the same as the pipelines API's (its webhook config reads it). */
  QUEUE_PREFIX: QueuePrefix.default(DEFAULT_QUEUE_PREFIX),
  /** /healthz and /readyz of the worker process. */
  PIPELINES_WORKER_PORT: env.port(4013),
  /** GET /metrics (Prometheus) on a port of its own; 0 picks a free one. */
  METRICS_PORT: env.port(9113),
  WORKER_CONCURRENCY: int(1, 100, 4),
  /** Runs of one workspace running or admitted at once over all workers (contract section 20); the API's must be the same. */
  PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS: WorkspaceMaxActiveRuns,
  /** Records per step; the worker checks for cancel and shutdown between steps. */
  WORKER_BATCH_SIZE: int(1, 10_000, 500),
  /** A pause inside every step; 0 in production, tests use it to have time between steps. */
  WORKER_STEP_DELAY_MS: int(0, 60_000, 0),
  /** A job whose lock is not renewed within this time counts as stalled (its worker died). */
  WORKER_LOCK_DURATION_MS: int(500, 600_000, 30_000),
  /** How often a worker looks for stalled jobs. */
  WORKER_STALLED_INTERVAL_MS: int(100, 600_000, 30_000),
  /** A run admitted this long ago and still `queued` without a job in the queue gets its job again (runs.requeue.ts). */
  WORKER_REQUEUE_AFTER_MS: int(1_000, 86_400_000, 60_000),
  /** How often the worker looks for such runs, and for workspaces with waiting runs beside free slots. */
  WORKER_REQUEUE_INTERVAL_MS: int(100, 3_600_000, 30_000),
  /**
   * How often the worker ends runs past their pipeline's run_timeout_seconds whose own worker did not
   * (it died, stalled): the contract's 5 s bound on a timeout holds with a pass every second.
   */
  WORKER_TIMEOUT_SWEEP_INTERVAL_MS: int(100, 5_000, 1_000),
  /** Whether this worker runs the scheduler loop (contract section 13); every worker does by default. */
  WORKER_SCHEDULER_ENABLED: env.boolean(true),
  /** The longest sleep of the scheduler between passes (it wakes sooner for the earliest next_run_at). */
  WORKER_SCHEDULER_INTERVAL_MS: int(50, 60_000, 1_000),
  /**
   * Due pipelines ticked per transaction. Small, because the transaction holds their rows: a run of
   * one of them that ends meanwhile waits for the commit in its success transaction, holding a worker
   * slot every workspace shares. With 100, a workspace of a hundred 1 s schedules kept all four slots
   * in such waits for about 2 s per pass on two busy cores, and another workspace's run waited 2.1-2.6 s
   * to start (the hostile battery's neighbours category); a full batch is followed by another pass at once.
   */
  WORKER_SCHEDULER_BATCH: int(1, 1_000, 10),
  /** First retry delay of a re-added run's job; the API's PIPELINES_RUN_BACKOFF_MS, for the same job options. */
  PIPELINES_RUN_BACKOFF_MS: int(0, 3_600_000, 5_000),
  /**
   * Stall recoveries BullMQ allows before it fails a job. 2 = three pick-ups, which is also the
   * worker's own cap (MAX_RUN_ATTEMPTS), so the run's attempts counter decides first.
   */
  WORKER_MAX_STALLED_COUNT: int(0, 100, 2),
  /** Ended runs and their logs are deleted this many days after they end, except each pipeline's latest 100 (contract section 20). */
  PIPELINES_RUN_RETENTION_DAYS: int(1, 36_500, 90),
  /** Between the end of one retention sweep and the next. */
  WORKER_RUN_RETENTION_INTERVAL_MS: int(1_000, 86_400_000, 3_600_000),
  /** Runs deleted per statement by the retention sweep. */
  WORKER_RUN_RETENTION_BATCH: int(1, 10_000, 500),
  /** SIGTERM: the current step finishes, then the process exits; this bounds the wait. */
  WORKER_SHUTDOWN_TIMEOUT_MS: int(1_000, 600_000, 30_000),
  HTTP_JSON_TIMEOUT_MS: int(100, 300_000, 10_000),
  HTTP_JSON_MAX_BYTES: int(1_024, 1_073_741_824, 50 * 1024 * 1024),
  ...ConnectorsConfig.shape,
  ...CommonConfig.shape,
});
export type WorkerConfig = z.infer<typeof WorkerConfig>;
