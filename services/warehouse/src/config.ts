import { z } from 'zod';
import { env } from '@platform/core';
import { ServiceConfig } from '@platform/webhooks';

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
});
export type WarehouseConfig = z.infer<typeof WarehouseConfig>;
