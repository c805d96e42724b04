import { z } from 'zod';
import { env, SERVICES } from '@platform/core';
import { ServiceConfig } from '@platform/webhooks';
import { ConnectorsConfig } from './connectors/policy';
import { WorkspaceMaxActiveRuns } from './runs.admission';
import { DEFAULT_RUNS_QUEUE, QueueName } from './runs.queue';
import { DEFAULT_MIN_INTERVAL_S, MAX_INTERVAL_S } from './schedule';

/** The pipelines API (src/main.ts). The run worker has its own schema in worker.config.ts. */
export const PipelinesConfig = ServiceConfig.extend({
  PIPELINES_PORT: env.port(4003),
  /** GET /metrics (Prometheus) on a port of its own, apart from the API's; 0 picks a free one. */
  METRICS_PORT: env.port(9103),
  PIPELINES_DATABASE_URL: env.url('postgresql://postgres@127.0.0.1:5432/platform_pipelines'),
  /**
   * The same database without the transaction-mode pooler, for migrations and anything that needs a
   * session of its own (contract section 17); unset: PIPELINES_DATABASE_URL.
   */
  PIPELINES_DIRECT_DATABASE_URL: env.url().optional(),
  PIPELINES_RUNS_QUEUE: QueueName.default(DEFAULT_RUNS_QUEUE),
  /** First retry delay of a failed run attempt; later ones double (exponential backoff). */
  PIPELINES_RUN_BACKOFF_MS: z.coerce.number().int().min(0).max(3_600_000).default(5_000),
  /** Runs of one workspace running or admitted at once over all workers (contract section 20); the worker's must be the same. */
  PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS: WorkspaceMaxActiveRuns,
  /** How long a trigger waits for Redis to accept the job before answering 503. */
  PIPELINES_ENQUEUE_TIMEOUT_MS: z.coerce.number().int().min(50).max(30_000).default(2_000),
  /** Prefix of the run URL in the Location header: the gateway's public base path of this service. */
  PIPELINES_PUBLIC_BASE_PATH: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be empty or a path like /pipelines/v3')
    .default(SERVICES.pipelines.prefix),
  /** The smallest `every_seconds` of an interval schedule (contract section 13). */
  PIPELINES_SCHEDULE_MIN_INTERVAL_S: z.coerce.number().int().min(1).max(MAX_INTERVAL_S).default(DEFAULT_MIN_INTERVAL_S),
  ...ConnectorsConfig.shape,
});
export type PipelinesConfig = z.infer<typeof PipelinesConfig>;
