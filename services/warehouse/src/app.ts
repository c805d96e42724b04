import { createServiceApp, type Logger } from '@platform/core';
import type { Express } from 'express';
import type { Database } from './database';
import { warehouseRoutes } from './warehouse.routes';
import { warehouseStore } from './warehouse.store';

export interface WarehouseDeps {
  db: Database;
  logger: Logger;
  internalSecret: string;
}

export function createApp(deps: WarehouseDeps): Express {
  return createServiceApp({
    logger: deps.logger,
    internalSecret: deps.internalSecret,
    routes: warehouseRoutes(warehouseStore(deps.db)),
    ready: async () => {
      await deps.db.$queryRaw`SELECT 1`;
    },
  });
}
