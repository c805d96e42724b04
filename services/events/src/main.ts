// First: tracing must be in place before express, pg, ioredis and undici are loaded (the imports below load them).
import { tracing } from './tracing';
import { loadConfig, runService } from '@platform/core';
import { startServiceWebhooks } from '@platform/webhooks';
import { createApp } from './app';
import { EventsConfig } from './config';
import { createDatabase } from './database';
import { eventsServiceStores } from './events.store';

const config = loadConfig(EventsConfig);
const database = createDatabase(config.EVENTS_DATABASE_URL, config);
runService({
  tracing,
  service: 'events',
  config,
  port: config.EVENTS_PORT,
  database,
  createStores: eventsServiceStores,
  startWebhooks: startServiceWebhooks,
  createApp,
});
