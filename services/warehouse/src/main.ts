// First: tracing must be in place before express, pg, ioredis and undici are loaded (the imports below load them).
import { tracing } from './tracing';
import { loadConfig, runService } from '@platform/core';
import { startServiceWebhooks } from '@platform/webhooks';
import { createApp } from './app';
import { WarehouseConfig } from './config';
import { createDatabase } from './database';
import { warehouseServiceStores } from './warehouse.store';

const config = loadConfig(WarehouseConfig);
const database = createDatabase(config.WAREHOUSE_DATABASE_URL, config);
runService({
  tracing,
  service: 'warehouse',
  config,
  port: config.WAREHOUSE_PORT,
  database,
  createStores: warehouseServiceStores,
  startWebhooks: startServiceWebhooks,
  createApp,
});
