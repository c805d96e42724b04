import { closeServer, createLogger, gracefulShutdown, listen, onShutdownSignals } from '@platform/core';
import { startServiceWebhooks } from '@platform/webhooks';
import { createApp } from './app';
import { readConfig } from './config';
import { createDatabase } from './database';

const config = readConfig();
const logger = createLogger('warehouse', config.LOG_LEVEL);
const db = createDatabase(config.WAREHOUSE_DATABASE_URL);
const webhooks = startServiceWebhooks({ service: 'warehouse', sql: db, redisUrl: config.REDIS_URL, config, logger });
const app = createApp({
  db,
  logger,
  internalSecret: config.PLATFORM_INTERNAL_SECRET,
  allowPrivateWebhooks: config.WEBHOOKS_ALLOW_PRIVATE,
  redisReady: () => webhooks.ping(),
});
const server = listen(app, config.WAREHOUSE_PORT, logger, 'warehouse service');

onShutdownSignals(
  gracefulShutdown(
    [
      { name: 'http server', run: () => closeServer(server) },
      { name: 'webhooks', run: () => webhooks.close() },
      { name: 'database', run: () => db.$disconnect() },
    ],
    logger,
  ),
);
