import { z } from 'zod';
import { env, CommonConfig, DEFAULT_QUEUE_PREFIX, DEFAULT_QUOTA_LIMITS, MAX_IDEMPOTENCY_BYTES_QUOTA, QueuePrefix } from '@platform/core';

export const GatewayConfig = z.object({
  GATEWAY_PORT: env.port(8080),
  /** GET /metrics (Prometheus) on a port of its own, never the public one; 0 picks a free one. */
  METRICS_PORT: env.port(9080),
  GATEWAY_DATABASE_URL: env.url('postgresql://postgres@127.0.0.1:5432/platform_gateway'),
  /**
   * The same database without the transaction-mode pooler, for migrations and anything that needs a
   * session of its own (contract section 17); unset: GATEWAY_DATABASE_URL.
   */
  GATEWAY_DIRECT_DATABASE_URL: env.url().optional(),
  PLATFORM_ADMIN_TOKEN: env.secret(),
  PLATFORM_INTERNAL_SECRET: env.secret(),
  EVENTS_URL: env.url('http://127.0.0.1:4001'),
  WAREHOUSE_URL: env.url('http://127.0.0.1:4002'),
  PIPELINES_URL: env.url('http://127.0.0.1:4003'),
  GATEWAY_UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(1).default(10_000),
  /** A client whose request headers are not complete within this gets 408 (slowloris). */
  GATEWAY_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /** A client whose whole request (headers and body) is not received within this gets 408. */
  GATEWAY_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /** 400 while events is beta v0; 800 once GA (contract section 6). */
  EVENTS_RATE_LIMIT: z.coerce.number().int().min(1).default(400),
  /** How often each gateway writes the keys' last use and usage counts (contract section 16: usage at most 60 s behind). */
  GATEWAY_USAGE_FLUSH_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  /**
   * How often each gateway reads the key-change log (contract sections 3, 16: a key change applies on
   * every gateway within 1 s, whether or not its pub/sub announcement arrives).
   */
  GATEWAY_KEY_CHANGES_POLL_MS: z.coerce.number().int().min(50).max(750).default(250),
  /**
   * The platform's default quota of stored idempotent answers per workspace, in bytes (contract
   * section 20; a workspace's own value, set through the admin API, wins).
   */
  WORKSPACE_QUOTA_IDEMPOTENCY_BYTES: z.coerce.number().int().min(0).max(MAX_IDEMPOTENCY_BYTES_QUOTA).default(DEFAULT_QUOTA_LIMITS.idempotency_bytes),
  /** The platform's key prefix in Redis (contract sections 11, 20): the gateway's keys are `<QUEUE_PREFIX>:gateway:...`. */
  QUEUE_PREFIX: QueuePrefix.default(DEFAULT_QUEUE_PREFIX),
  ...CommonConfig.shape,
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;

/**
 * What the CLI needs: the gateway whose admin API it calls (the same path for key changes as the
 * console's, so every gateway instance hears of them), and the database for `migrate` and
 * `demo-seed`, which run before any gateway does (`migrate` on the direct URL: it takes a session lock).
 */
export const CliConfig = GatewayConfig.pick({
  GATEWAY_DATABASE_URL: true,
  GATEWAY_DIRECT_DATABASE_URL: true,
  DATABASE_CONNECT_TIMEOUT_MS: true,
  DATABASE_QUERY_TIMEOUT_MS: true,
  DATABASE_POOL_MAX: true,
  DATABASE_POOL_TIMEOUT_MS: true,
}).extend({
  PLATFORM_URL: env.url('http://127.0.0.1:8080'),
  /** Required by the commands that call the admin API (all but `migrate` and `demo-seed`). */
  PLATFORM_ADMIN_TOKEN: env.secret().optional(),
});
export type CliConfig = z.infer<typeof CliConfig>;
