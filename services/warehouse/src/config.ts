import { z } from 'zod';
import { DEFAULT_WORKSPACE_LIMITS, env } from '@platform/core';
import { ServiceConfig } from '@platform/webhooks';
import type { WarehouseLimits } from './workspace-limits';

export const WarehouseConfig = ServiceConfig.extend({
  WAREHOUSE_PORT: env.port(4002),
  /** GET /metrics (Prometheus) on a port of its own, apart from the API's; 0 picks a free one. */
  METRICS_PORT: env.port(9102),
  WAREHOUSE_DATABASE_URL: env.url('postgresql://postgres@127.0.0.1:5432/platform_warehouse'),
  /**
   * The same database without the transaction-mode pooler, for migrations and anything that needs a
   * session of its own (contract section 17); unset: WAREHOUSE_DATABASE_URL.
   */
  WAREHOUSE_DIRECT_DATABASE_URL: env.url().optional(),
  /**
   * Between the end of one reservations sweep and the next: `reservation.expired` is due within 60 s
   * of `expires_at` (contract section 18), so at most 30 s, leaving a slow sweep room.
   */
  WAREHOUSE_RESERVATION_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).max(30_000).default(5_000),
  /** Items expired, and ended reservations deleted, per statement of that sweep. */
  WAREHOUSE_RESERVATION_SWEEP_BATCH: z.coerce.number().int().min(1).max(10_000).default(500),
  /** Committed, released and expired reservations are deleted this many days after they ended (contract section 20). */
  WAREHOUSE_RESERVATION_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** Items one workspace keeps at most (items are never deleted); one more is 409 `quota_exceeded`. */
  WAREHOUSE_WORKSPACE_MAX_ITEMS: env.limit(DEFAULT_WORKSPACE_LIMITS.items),
  /** Locations one workspace keeps at most (never deleted either). */
  WAREHOUSE_WORKSPACE_MAX_LOCATIONS: env.limit(DEFAULT_WORKSPACE_LIMITS.locations),
  /** Reservations of one workspace active (and not yet at their `expires_at`) at once. */
  WAREHOUSE_WORKSPACE_MAX_ACTIVE_RESERVATIONS: env.limit(DEFAULT_WORKSPACE_LIMITS.active_reservations),
});
export type WarehouseConfig = z.infer<typeof WarehouseConfig>;

/** The per-workspace limits the configuration gives, for the app. */
export function warehouseLimits(config: WarehouseConfig): WarehouseLimits {
  return {
    items: config.WAREHOUSE_WORKSPACE_MAX_ITEMS,
    locations: config.WAREHOUSE_WORKSPACE_MAX_LOCATIONS,
    active_reservations: config.WAREHOUSE_WORKSPACE_MAX_ACTIVE_RESERVATIONS,
  };
}
