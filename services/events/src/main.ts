import { closeServer, createLogger, gracefulShutdown, listen, onShutdownSignals } from '@platform/core';
import { startServiceWebhooks } from '@platform/webhooks';
import { createApp } from './app';
import { readConfig } from './config';
import { createDatabase } from './database';

const config = readConfig();
const logger = createLogger('events', config.LOG_LEVEL);
const db = createDatabase(config.EVENTS_DATABASE_URL);
const webhooks = startServiceWebhooks({ service: 'events', sql: db, redisUrl: config.REDIS_URL, config, logger });
const app = createApp({
  db,
  logger,
  internalSecret: config.PLATFORM_INTERNAL_SECRET,
  allowPrivateWebhooks: config.WEBHOOKS_ALLOW_PRIVATE,
  redisReady: () => webhooks.ping(),
});
const server = listen(app, config.EVENTS_PORT, logger, 'events service');

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
