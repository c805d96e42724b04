import { Redis } from 'ioredis';
import { closeServer, createLogger, createMetricsRegistry, gracefulShutdown, HttpMetrics, listen, onShutdownSignals, startMetricsServer } from '@platform/core';
import { startServiceWebhooks } from '@platform/webhooks';
import { createApp } from './app';
import { connectorPolicy } from './connectors';
import { readConfig } from './config';
import { createDatabase } from './database';
import { pipelinesServiceStores } from './pipelines.store';
import { createRunsProducer } from './runs.queue';

const config = readConfig();
const logger = createLogger('pipelines', config.LOG_LEVEL);
const db = createDatabase(config.PIPELINES_DATABASE_URL, config);
const metrics = createMetricsRegistry();
// A producer fails fast: no offline queue, one try per command; a trigger answers 503 at once
// instead of waiting for Redis.
const redis = new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000 });
redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
const producer = createRunsProducer({
  redis,
  queueName: config.PIPELINES_RUNS_QUEUE,
  prefix: config.QUEUE_PREFIX,
  backoffMs: config.PIPELINES_RUN_BACKOFF_MS,
  timeoutMs: config.PIPELINES_ENQUEUE_TIMEOUT_MS,
  logger,
});
const webhooks = startServiceWebhooks({ service: 'pipelines', sql: db, redisUrl: config.REDIS_URL, config, logger, metrics });
const app = createApp({
  stores: pipelinesServiceStores(db),
  producer,
  redisReady: () => producer.ping(),
  logger,
  internalSecret: config.PLATFORM_INTERNAL_SECRET,
  metrics: new HttpMetrics(metrics),
  publicBasePath: config.PIPELINES_PUBLIC_BASE_PATH,
  allowPrivateWebhooks: config.WEBHOOKS_ALLOW_PRIVATE,
  connectors: connectorPolicy(config),
});
const server = listen(app, config.PIPELINES_PORT, logger, 'pipelines service', config.HOST);
const metricsServer = startMetricsServer(config.METRICS_PORT, metrics, logger, config.HOST);

onShutdownSignals(
  gracefulShutdown(
    [
      { name: 'http server', run: () => closeServer(server) },
      { name: 'runs queue', run: () => producer.close() },
      { name: 'webhooks', run: () => webhooks.close() },
      // Scrapes go on while requests and deliveries drain.
      { name: 'metrics server', run: () => closeServer(metricsServer) },
      { name: 'database', run: () => db.$disconnect() },
      { name: 'redis', run: () => redis.quit() },
    ],
    logger,
  ),
);
