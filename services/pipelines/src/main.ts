// First: tracing must be in place before express, pg, ioredis and undici are loaded (the imports below load them).
import { tracing } from './tracing';
import pg from 'pg';
import { closeRedisConnection, createRedisConnection, loadConfig, redisTarget, runService } from '@platform/core';
import { startServiceWebhooks } from '@platform/webhooks';
import { createApp } from './app';
import { connectorPolicy } from './connectors';
import { connectorsStore } from './connectors.store';
import { PipelinesConfig } from './config';
import { createDatabase } from './database';
import { pipelinesServiceStores } from './pipelines.store';
import { createRunsProducer } from './runs.queue';

const config = loadConfig(PipelinesConfig);
const database = createDatabase(config.PIPELINES_DATABASE_URL, config);
runService({
  tracing,
  service: 'pipelines',
  config,
  port: config.PIPELINES_PORT,
  database,
  createStores: pipelinesServiceStores,
  startWebhooks: startServiceWebhooks,
  createApp: (deps) => {
    // A producer fails fast: no offline queue, one try per command; a trigger answers 503 at once
    // instead of waiting for Redis.
    const redis = createRedisConnection(redisTarget(config), { name: 'pipelines-runs-producer', role: 'producer', logger: deps.logger });
    const producer = createRunsProducer({
      redis,
      queueName: config.PIPELINES_RUNS_QUEUE,
      prefix: config.QUEUE_PREFIX,
      backoffMs: config.PIPELINES_RUN_BACKOFF_MS,
      timeoutMs: config.PIPELINES_ENQUEUE_TIMEOUT_MS,
      logger: deps.logger,
    });
    // POST /connectors/check of a postgres destination without connection_url connects here, as runs do.
    const checkPool = new pg.Pool({ connectionString: config.PIPELINES_DATABASE_URL, max: 2, connectionTimeoutMillis: 5_000 });
    checkPool.on('error', (err) => deps.logger.warn({ err: err.message }, 'connector check pool error'));
    return {
      app: createApp({
        ...deps,
        producer,
        redisReady: () => producer.ping(),
        publicBasePath: config.PIPELINES_PUBLIC_BASE_PATH,
        connectors: connectorPolicy(config),
        connectorCheck: { store: connectorsStore(checkPool) },
        schedules: { minIntervalS: config.PIPELINES_SCHEDULE_MIN_INTERVAL_S },
        workspaceMaxActiveRuns: config.PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS,
      }),
      drain: [{ name: 'runs queue', run: () => producer.close() }],
      disconnect: [
        { name: 'redis', run: () => closeRedisConnection(redis) },
        { name: 'connector check pool', run: () => checkPool.end() },
      ],
    };
  },
});
