import { createServer } from 'node:http';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { closeServer, createLogger, createMetricsRegistry, gracefulShutdown, listeningAt, onShutdownSignals, Readiness, registeredCounter, startMetricsServer, trackQueueDepth } from '@platform/core';
import { connectorPolicy, type ConnectorRuntime } from './connectors';
import { createDatabase } from './database';
import type { RunsQueue } from './runs.queue';
import { startRunRequeue } from './runs.requeue';
import { runsStore } from './runs.store';
import { createRunsWorker } from './runs.worker';
import { readWorkerConfig } from './worker.config';

/** The run worker: drains the run queue; deployed apart from the API. */
const config = readWorkerConfig();
const logger = createLogger('pipelines-worker', config.LOG_LEVEL);
const db = createDatabase(config.PIPELINES_DATABASE_URL, config);
// The postgres destination's default database (the pipelines database), shared by all runs.
const destinationPool = new pg.Pool({ connectionString: config.PIPELINES_DATABASE_URL, max: Math.max(2, config.WORKER_CONCURRENCY) });
destinationPool.on('error', (err) => logger.warn({ err: err.message }, 'destination pool error'));
// A worker waits for Redis rather than failing: commands are retried until it is back.
const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));

const runtime: ConnectorRuntime = {
  defaultPool: destinationPool,
  httpTimeoutMs: config.HTTP_JSON_TIMEOUT_MS,
  httpMaxBytes: config.HTTP_JSON_MAX_BYTES,
  ...connectorPolicy(config),
};

const metrics = createMetricsRegistry();
const runOutcomes = registeredCounter(metrics, 'pipeline_runs_total', 'Runs this worker ended, by outcome.', ['outcome']);
const outcomeCounters = { succeeded: runOutcomes.labels('succeeded'), failed: runOutcomes.labels('failed'), cancelled: runOutcomes.labels('cancelled') };
for (const child of Object.values(outcomeCounters)) child.inc(0);
// The run queue's depth, read at scrape time on a connection of its own that fails fast: a scrape
// never waits for Redis (the worker's connection waits for it by design).
const queueRedis = new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000 });
queueRedis.on('error', () => undefined);
const runsQueue = new Queue(config.PIPELINES_RUNS_QUEUE, { connection: queueRedis, prefix: config.QUEUE_PREFIX });
runsQueue.on('error', () => undefined);
trackQueueDepth(metrics, runsQueue);

const runs = createRunsWorker({
  connection: redis,
  queueName: config.PIPELINES_RUNS_QUEUE,
  prefix: config.QUEUE_PREFIX,
  concurrency: config.WORKER_CONCURRENCY,
  lockDurationMs: config.WORKER_LOCK_DURATION_MS,
  stalledIntervalMs: config.WORKER_STALLED_INTERVAL_MS,
  maxStalledCount: config.WORKER_MAX_STALLED_COUNT,
  executor: { runs: runsStore(db), runtime, batchSize: config.WORKER_BATCH_SIZE, stepDelayMs: config.WORKER_STEP_DELAY_MS, logger },
  logger,
  onOutcome: (outcome) => outcomeCounters[outcome].inc(),
});

// Readiness follows the database only (contract section 12): without Redis the worker waits for it
// and serves again once it is back; Redis is shown in the body and in platform_dependency_up.
const readiness = new Readiness({ database: () => db.$queryRaw`SELECT 1`, redis: () => queueRedis.ping() }, { registry: metrics, logger });

// Contract section 12: every process answers /healthz and /readyz on its own port.
const health = createServer((req, res) => {
  const answer = (status: number, body: object) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
  };
  if (req.url === '/healthz') return answer(200, { status: 'ok' });
  if (req.url === '/readyz') {
    void readiness.check().then(({ ready, checks }) => answer(ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable', checks }));
    return;
  }
  answer(404, { status: 'not_found' });
});
health.on('error', (err) => {
  logger.fatal({ err }, `worker health port ${config.PIPELINES_WORKER_PORT} unavailable`);
  process.exit(1);
});
health.listen(config.PIPELINES_WORKER_PORT, config.HOST, () => logger.info(listeningAt(health, config.PIPELINES_WORKER_PORT), 'worker health listening'));
const metricsServer = startMetricsServer(config.METRICS_PORT, metrics, logger, config.HOST);

/**
 * Takes jobs only once the database answers: the first query also loads Prisma's query
 * compiler, which must not happen while a job's lock is waiting to be renewed.
 */
async function start(): Promise<void> {
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      await db.$queryRaw`SELECT 1`;
      break;
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'database not reachable; waiting');
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
  void runs.worker.run().catch((err: unknown) => logger.error({ err }, 'runs worker stopped'));
  await runs.worker.waitUntilReady();
  await runs.cancelsHeard.catch(() => undefined);
  requeue = startRunRequeue({
    queue: runsQueue as RunsQueue,
    runs: runsStore(db),
    afterMs: config.WORKER_REQUEUE_AFTER_MS,
    intervalMs: config.WORKER_REQUEUE_INTERVAL_MS,
    backoffMs: config.PIPELINES_RUN_BACKOFF_MS,
    logger,
  });
  logger.info({ queue: config.PIPELINES_RUNS_QUEUE, prefix: config.QUEUE_PREFIX, concurrency: config.WORKER_CONCURRENCY }, 'worker ready');
}
let requeue: { stop(): Promise<void> } | undefined;
void start();

onShutdownSignals(
  gracefulShutdown(
    [
      // Running runs finish their current step, are handed back to the queue, then the worker closes.
      { name: 'run requeue', run: () => requeue?.stop() ?? Promise.resolve() },
      { name: 'runs worker', run: () => runs.close() },
      { name: 'health server', run: () => closeServer(health) },
      { name: 'metrics server', run: () => closeServer(metricsServer) },
      { name: 'runs queue', run: () => runsQueue.close() },
      { name: 'destination pool', run: () => destinationPool.end() },
      { name: 'database', run: () => db.$disconnect() },
      { name: 'redis', run: () => Promise.all([redis.quit(), queueRedis.quit().catch(() => queueRedis.disconnect())]) },
    ],
    logger,
    config.WORKER_SHUTDOWN_TIMEOUT_MS,
  ),
);
