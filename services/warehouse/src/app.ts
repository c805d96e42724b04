import { createServiceApp, type Logger } from '@platform/core';
import { webhookRoutes } from '@platform/webhooks';
import type { Express } from 'express';
import type { Database } from './database';
import { warehouseRoutes } from './warehouse.routes';
import { warehouseStore } from './warehouse.store';

export interface WarehouseDeps {
  db: Database;
  logger: Logger;
  internalSecret: string;
  /** Accept private and loopback webhook targets (tests, local use). */
  allowPrivateWebhooks: boolean;
  /** Resolves when Redis (the webhook queue) answers. */
  redisReady: () => Promise<void>;
}

export function createApp(deps: WarehouseDeps): Express {
  return createServiceApp({
    logger: deps.logger,
    internalSecret: deps.internalSecret,
    routes: warehouseRoutes(warehouseStore(deps.db), webhookRoutes({ sql: deps.db, allowPrivate: deps.allowPrivateWebhooks })),
    ready: async () => {
      await deps.db.$queryRaw`SELECT 1`;
      await deps.redisReady();
    },
  });
}
