import { closeServer, createLogger, createMetricsRegistry, gracefulShutdown, HttpMetrics, listen, onShutdownSignals, startMetricsServer } from '@platform/core';
import { startServiceWebhooks } from '@platform/webhooks';
import { createApp } from './app';
import { readConfig } from './config';
import { createDatabase } from './database';
import { warehouseServiceStores } from './warehouse.store';

const config = readConfig();
const logger = createLogger('warehouse', config.LOG_LEVEL);
const db = createDatabase(config.WAREHOUSE_DATABASE_URL, config);
const metrics = createMetricsRegistry();
const webhooks = startServiceWebhooks({ service: 'warehouse', sql: db, redisUrl: config.REDIS_URL, config, logger, metrics });
const app = createApp({
  stores: warehouseServiceStores(db),
  logger,
  internalSecret: config.PLATFORM_INTERNAL_SECRET,
  metrics: new HttpMetrics(metrics),
  allowPrivateWebhooks: config.WEBHOOKS_ALLOW_PRIVATE,
  redisReady: () => webhooks.ping(),
});
const server = listen(app, config.WAREHOUSE_PORT, logger, 'warehouse service', config.HOST);
const metricsServer = startMetricsServer(config.METRICS_PORT, metrics, logger, config.HOST);

onShutdownSignals(
  gracefulShutdown(
    [
      { name: 'http server', run: () => closeServer(server) },
      { name: 'webhooks', run: () => webhooks.close() },
      // Scrapes go on while requests and deliveries drain.
      { name: 'metrics server', run: () => closeServer(metricsServer) },
      { name: 'database', run: () => db.$disconnect() },
    ],
    logger,
  ),
);
