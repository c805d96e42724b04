// First: tracing must be in place before express, pg, ioredis and undici are loaded (the imports below load them).
import { tracing } from './tracing';
import { loadConfig, runService } from '@platform/core';
import { startServiceWebhooks } from '@platform/webhooks';
import { createApp } from './app';
import { WarehouseConfig, warehouseLimits } from './config';
import { createDatabase } from './database';
import { reservationsExpiryStore } from './reservations-expiry.store';
import { startReservationsSweeper } from './reservations.expiry';
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
  // The service process (not every app tests build) expires due reservations and prunes ended ones, beside the webhooks relay.
  createApp: (deps) => {
    const sweeper = startReservationsSweeper({
      store: reservationsExpiryStore(database),
      intervalMs: config.WAREHOUSE_RESERVATION_SWEEP_INTERVAL_MS,
      batchSize: config.WAREHOUSE_RESERVATION_SWEEP_BATCH,
      retentionDays: config.WAREHOUSE_RESERVATION_RETENTION_DAYS,
      logger: deps.logger,
      metrics: deps.metrics?.registry,
    });
    return { app: createApp({ ...deps, limits: warehouseLimits(config) }), drain: [{ name: 'reservations sweeper', run: () => sweeper.stop() }] };
  },
});
