import { Redis } from 'ioredis';
import { createLogger, gracefulShutdown, onShutdownSignals } from '@platform/core';
import { createApp } from './app';
import { readConfig } from './config';
import { createDatabase } from './database';
import { createRunsProducer } from './runs.queue';

const config = readConfig();
const logger = createLogger('pipelines', config.LOG_LEVEL);
const db = createDatabase(config.PIPELINES_DATABASE_URL);
// A producer fails fast: no offline queue, one try per command; a trigger answers 503 at once
// instead of waiting for Redis.
const redis = new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000 });
redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
const producer = createRunsProducer({
  redis,
  queueName: config.PIPELINES_RUNS_QUEUE,
  backoffMs: config.PIPELINES_RUN_BACKOFF_MS,
  timeoutMs: config.PIPELINES_ENQUEUE_TIMEOUT_MS,
  logger,
});
const app = createApp({ db, producer, logger, internalSecret: config.PLATFORM_INTERNAL_SECRET, publicBasePath: config.PIPELINES_PUBLIC_BASE_PATH });
const server = app.listen(config.PIPELINES_PORT, () => {
  logger.info({ port: config.PIPELINES_PORT }, 'pipelines service listening');
});
// Longer than the gateway's keep-alive so the gateway, not this side, closes idle pooled sockets.
server.keepAliveTimeout = 65_000;

onShutdownSignals(
  gracefulShutdown(
    [
      { name: 'http server', run: () => new Promise<void>((resolve) => server.close(() => resolve())) },
      { name: 'runs queue', run: () => producer.close() },
      { name: 'database', run: () => db.$disconnect() },
      { name: 'redis', run: () => redis.quit() },
    ],
    logger,
  ),
);
