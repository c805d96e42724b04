import { closeServer, createLogger, createMetricsRegistry, gracefulShutdown, HttpMetrics, listen, onShutdownSignals, startMetricsServer } from '@platform/core';
import { startServiceWebhooks } from '@platform/webhooks';
import { createApp } from './app';
import { readConfig } from './config';
import { createDatabase } from './database';
import { eventsServiceStores } from './events.store';

const config = readConfig();
const logger = createLogger('events', config.LOG_LEVEL);
const db = createDatabase(config.EVENTS_DATABASE_URL, config);
const metrics = createMetricsRegistry();
const webhooks = startServiceWebhooks({ service: 'events', sql: db, redisUrl: config.REDIS_URL, config, logger, metrics });
const app = createApp({
  stores: eventsServiceStores(db),
  logger,
  internalSecret: config.PLATFORM_INTERNAL_SECRET,
  metrics: new HttpMetrics(metrics),
  allowPrivateWebhooks: config.WEBHOOKS_ALLOW_PRIVATE,
  redisReady: () => webhooks.ping(),
});
const server = listen(app, config.EVENTS_PORT, logger, 'events service', config.HOST);
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
