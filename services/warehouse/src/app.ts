import { contractRouter, createServiceApp, type HttpMetrics, type Logger } from '@platform/core';
import { webhookRoutes } from '@platform/webhooks';
import type { Express } from 'express';
import type { Database } from './database';
import { warehouseApiDocument } from './warehouse.openapi';
import { warehouseRouteDefinitions } from './warehouse.routes';
import { warehouseStore } from './warehouse.store';

export interface WarehouseDeps {
  db: Database;
  logger: Logger;
  internalSecret: string;
  /** Accept private and loopback webhook targets (tests, local use). */
  allowPrivateWebhooks: boolean;
  /** Resolves when Redis (the webhook queue) answers. */
  redisReady: () => Promise<void>;
  /** Request counts and latencies by route (GET /metrics); none when absent. */
  metrics?: HttpMetrics;
}

export function createApp(deps: WarehouseDeps): Express {
  const definitions = warehouseRouteDefinitions(warehouseStore(deps.db), webhookRoutes({ sql: deps.db, allowPrivate: deps.allowPrivateWebhooks }), deps.logger);
  return createServiceApp({
    service: 'warehouse',
    logger: deps.logger,
    internalSecret: deps.internalSecret,
    metrics: deps.metrics,
    routes: contractRouter('warehouse', definitions),
    openapi: warehouseApiDocument(),
    // Redis down (webhook deliveries wait) degrades the service without failing readiness (contract section 12).
    ready: { database: () => deps.db.$queryRaw`SELECT 1`, redis: deps.redisReady },
  });
}
