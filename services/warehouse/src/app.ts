import { contractRouter, createServiceApp, type ServiceAppDeps } from '@platform/core';
import { webhookRoutes, type ServiceWebhooks } from '@platform/webhooks';
import type { Express } from 'express';
import { warehouseApiDocument } from './warehouse.openapi';
import { warehouseRouteDefinitions } from './warehouse.routes';
import type { WarehouseServiceStores } from './warehouse.store';
import { DEFAULT_WAREHOUSE_LIMITS, type WarehouseLimits } from './workspace-limits';

/** `redisReady`: the webhook queue's Redis; `webhooks`: its runtime, whose queue a resend adds to. */
export interface WarehouseDeps extends ServiceAppDeps<WarehouseServiceStores, ServiceWebhooks> {
  /** What one workspace may keep (WAREHOUSE_WORKSPACE_MAX_*); default: core's DEFAULT_WORKSPACE_LIMITS. */
  limits?: WarehouseLimits;
}

export function createApp(deps: WarehouseDeps): Express {
  const { stores } = deps;
  const definitions = warehouseRouteDefinitions(
    stores.warehouse,
    webhookRoutes({ store: stores.webhooks, allowPrivate: deps.allowPrivateWebhooks, queue: deps.webhooks?.queue }),
    deps.limits ?? DEFAULT_WAREHOUSE_LIMITS,
    deps.logger,
  );
  return createServiceApp({
    service: 'warehouse',
    logger: deps.logger,
    internalSecret: deps.internalSecret,
    metrics: deps.metrics,
    routes: contractRouter('warehouse', definitions),
    openapi: warehouseApiDocument(),
    usage: (workspaceId) => stores.webhooks.usage(workspaceId),
    // Redis down (webhook deliveries wait) degrades the service without failing readiness (contract section 12).
    ready: { database: stores.ping, redis: deps.redisReady },
  });
}
