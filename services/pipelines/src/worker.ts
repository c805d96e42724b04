// First: tracing must be in place before pg, ioredis and undici are loaded (the imports below load them).
import { tracing } from './worker.tracing';
import pg from 'pg';
import { closeRedisConnection, closeServer, createRedisConnection, listen, loadConfig, redisTarget, runProcess } from '@platform/core';
import { connectorsStore } from './connectors.store';
import { createDatabase } from './database';
import { runWorkerStores } from './worker.store';
import { createRunWorker } from './worker.app';
import { WorkerConfig } from './worker.config';

const config = loadConfig(WorkerConfig);
runProcess({ name: 'pipelines-worker', config, tracing, shutdownDeadlineMs: config.WORKER_SHUTDOWN_TIMEOUT_MS }, ({ logger, metrics, metricsServerStep }) => {
  const db = createDatabase(config.PIPELINES_DATABASE_URL, config);
  const destinationPool = new pg.Pool({ connectionString: config.PIPELINES_DATABASE_URL, max: Math.max(2, config.WORKER_CONCURRENCY) });
  destinationPool.on('error', (err) => logger.warn({ err: err.message }, 'destination pool error'));
  // A worker waits for Redis rather than failing: commands are retried until it is back.
  const redis = createRedisConnection(redisTarget(config), { name: 'pipelines-worker', role: 'worker', logger });
  const queueRedis = createRedisConnection(redisTarget(config), { name: 'pipelines-worker-queue', role: 'producer' });

  const worker = createRunWorker({ config, stores: runWorkerStores(db), redis, queueRedis, destinations: connectorsStore(destinationPool), logger, metrics });
  // Contract section 12: every process answers /healthz and /readyz on its own port.
  const health = listen(worker.health, config.PIPELINES_WORKER_PORT, logger, 'worker health', config.HOST);
  health.on('error', (err) => {
    logger.fatal({ err }, `worker health port ${config.PIPELINES_WORKER_PORT} unavailable`);
    process.exit(1);
  });
  void worker.start();

  return [
    { name: 'scheduler', run: () => worker.stopScheduler() },
    { name: 'run requeue', run: () => worker.stopRequeue() },
    { name: 'run retention', run: () => worker.stopRetention() },
    { name: 'run timeouts', run: () => worker.stopTimeouts() },
    { name: 'runs worker', run: () => worker.stopRuns() },
    { name: 'health server', run: () => closeServer(health) },
    metricsServerStep,
    { name: 'runs queue', run: () => worker.closeQueue() },
    { name: 'destination pool', run: () => destinationPool.end() },
    { name: 'database', run: () => db.$disconnect() },
    { name: 'redis', run: () => Promise.all([closeRedisConnection(redis), closeRedisConnection(queueRedis)]) },
  ];
});
