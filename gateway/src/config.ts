import { z } from 'zod';
import { MAX_QUOTA } from '@platform/admin-api';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from './redis';
import {
  env,
  CommonConfig,
  DEFAULT_QUEUE_PREFIX,
  DEFAULT_QUOTA_LIMITS,
  DEFAULT_WORKSPACE_LIMITS,
  QueuePrefix,
  type QuotaLimits,
  type QuotaName,
} from '@platform/core';

/** A platform default quota (contract section 20), up to the quota's maximum; unset: the contract's default. */
const quotaDefault = (name: QuotaName) => env.limit(DEFAULT_QUOTA_LIMITS[name], MAX_QUOTA[name]);

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
   * A gateway command Redis has not answered within this fails, and the request goes on without
   * Redis (limits from memory, 503 for an Idempotency-Key): Redis never stalls the hot path.
   */
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(1).max(10_000).default(DEFAULT_REDIS_COMMAND_TIMEOUT_MS),
  /** The platform's key prefix in Redis (contract sections 11, 20): the gateway's keys are `<QUEUE_PREFIX>:gateway:...`. */
  QUEUE_PREFIX: QueuePrefix.default(DEFAULT_QUEUE_PREFIX),
  /** The quotas of every workspace without a value of its own (contract section 20; set per workspace through the admin API). */
  WORKSPACE_QUOTA_PIPELINES: quotaDefault('pipelines'),
  WORKSPACE_QUOTA_SCHEDULED_PIPELINES: quotaDefault('scheduled_pipelines'),
  /** Per service: events, warehouse and pipelines each allow this many. */
  WORKSPACE_QUOTA_WEBHOOK_ENDPOINTS: quotaDefault('webhook_endpoints'),
  WORKSPACE_QUOTA_IDEMPOTENCY_BYTES: quotaDefault('idempotency_bytes'),
  /**
   * The API keys one workspace may hold (neither revoked, expired nor replaced by a roll), the same
   * for every workspace (not a contract quota: not set through the quotas API). A create past it is
   * 409 `quota_exceeded` with `quota: "api_keys"`; a limit lowered below what a workspace holds
   * removes nothing.
   */
  GATEWAY_WORKSPACE_MAX_API_KEYS: env.limit(DEFAULT_WORKSPACE_LIMITS.api_keys),
  ...CommonConfig.shape,
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;

/** The platform default quotas the configuration gives. */
export function quotaDefaults(config: GatewayConfig): QuotaLimits {
  return {
    pipelines: config.WORKSPACE_QUOTA_PIPELINES,
    scheduled_pipelines: config.WORKSPACE_QUOTA_SCHEDULED_PIPELINES,
    webhook_endpoints: config.WORKSPACE_QUOTA_WEBHOOK_ENDPOINTS,
    idempotency_bytes: config.WORKSPACE_QUOTA_IDEMPOTENCY_BYTES,
  };
}
