// First: tracing must be in place before express, pg, ioredis and undici are loaded (the imports below load them).
import { tracing } from './tracing';
import { loadConfig, runService } from '@platform/core';
import { startServiceWebhooks } from '@platform/webhooks';
import { createApp } from './app';
import { EventsConfig, eventsLimits } from './config';
import { createDatabase } from './database';
import { eventsServiceStores } from './events.store';
import { scansRetentionStore } from './scans-retention.store';
import { startScansRetention } from './scans.retention';

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
  // The service process (not every app tests build) sweeps unmatched scans, beside the webhooks pruner.
  createApp: (deps) => {
    const scans = startScansRetention({
      store: scansRetentionStore(database),
      intervalMs: config.EVENTS_SCAN_RETENTION_INTERVAL_MS,
      firstDelayMs: Math.min(60_000, config.EVENTS_SCAN_RETENTION_INTERVAL_MS),
      batchSize: config.EVENTS_SCAN_RETENTION_BATCH,
      logger: deps.logger,
      metrics: deps.metrics?.registry,
    });
    return { app: createApp({ ...deps, limits: eventsLimits(config) }), drain: [{ name: 'scan retention', run: () => scans.stop() }] };
  },
});
