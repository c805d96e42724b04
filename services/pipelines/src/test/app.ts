import { Redis } from 'ioredis';
import pg from 'pg';
import { Queue } from 'bullmq';
import type { Resolver } from '@platform/address-guard';
import { queueKeyPrefix, type Registry } from '@platform/core';
import { startServiceTestApp, testDatabaseUrl, testRedisUrl, uniqueName, type ServiceTestApp } from '@platform/testing';
import { startServiceWebhooks, TEST_WEBHOOKS_CONFIG } from '@platform/webhooks';
import { createApp } from '../app';
import { connectorPolicy, type ConnectorPolicy } from '../connectors';
import { connectorsStore } from '../connectors.store';
import { createDatabase, type Database } from '../database';
import { pipelinesServiceStores } from '../pipelines.store';
import { createRunsProducer } from '../runs.queue';

/** The pipelines API under test; `queuePrefix` (QUEUE_PREFIX) is its runs queue's and its webhook queue's, and close() deletes every `<queuePrefix>:*` key. */
export interface TestApp extends ServiceTestApp<Database> {
  queueName: string;
}

/** The runs queue of one test: a name and a key prefix of its own, for the API (startTestApp) and its workers (spawnWorker). */
export interface TestQueue {
  name: string;
  prefix: string;
}

/** A fresh queue: a unique name starting with `label`, and its prefix. */
export function testQueue(label = 'runs-test'): TestQueue {
  return queueNamed(uniqueName(label));
}

/** The queue of a given (unique) name: its prefix is derived from it, so an API and a worker given only the name agree. */
export function queueNamed(name: string): TestQueue {
  return { name, prefix: `test-${name}` };
}

function bounded(promise: Promise<unknown>, ms = 2_000): Promise<void> {
  return Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => setTimeout(resolve, ms).unref()),
  ]);
}

/**
 * The pipelines API on a real database, a real Redis and a real port, producing to its own queue
 * (`queue`, unique unless given; a bare `queueName` gets a prefix of its own) under a key prefix
 * of its own, which its webhook queue shares. `redisUrl` may point nowhere to play a Redis
 * outage. close() deletes every key of the prefix: a test leaves nothing in Redis.
 */
export async function startTestApp(
  options: {
    queue?: TestQueue;
    queueName?: string;
    redisUrl?: string;
    enqueueTimeoutMs?: number;
    backoffMs?: number;
    webhooks?: boolean;
    metrics?: Registry;
    connectors?: ConnectorPolicy;
    /** The deadline of POST /connectors/check (8 s unless given). */
    checkTimeoutMs?: number;
    /** PIPELINES_SCHEDULE_MIN_INTERVAL_S (default 60). */
    scheduleMinIntervalS?: number;
    /** PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS (default 10); give the test's workers the same. */
    workspaceMaxActiveRuns?: number;
  } = {},
): Promise<TestApp> {
  const queue = options.queue ?? (options.queueName ? queueNamed(options.queueName) : testQueue());
  const app = await startServiceTestApp({
    service: 'pipelines',
    createDatabase: (url) => createDatabase(url),
    createStores: pipelinesServiceStores,
    startWebhooks: ({ queuePrefix, ...deps }) => startServiceWebhooks({ ...deps, config: { ...TEST_WEBHOOKS_CONFIG, QUEUE_PREFIX: queuePrefix } }),
    webhooks: options.webhooks,
    metrics: options.metrics,
    queuePrefix: queue.prefix,
    createApp: (deps) => {
      const redis = new Redis(options.redisUrl ?? testRedisUrl(), { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 1_000 });
      redis.on('error', () => undefined);
      const producer = createRunsProducer({
        redis,
        queueName: queue.name,
        prefix: queue.prefix,
        backoffMs: options.backoffMs ?? 100,
        timeoutMs: options.enqueueTimeoutMs ?? 1_000,
        logger: deps.logger,
      });
      // The worker the tests spawn allows private addresses too (test/worker.ts): sources and destinations on 127.0.0.1.
      const connectors = options.connectors ?? testConnectorPolicy({ allowPrivate: true });
      const checkPool = new pg.Pool({ connectionString: testDatabaseUrl('pipelines'), max: 2 });
      checkPool.on('error', () => undefined);
      const connectorCheck = { store: connectorsStore(checkPool), timeoutMs: options.checkTimeoutMs };
      return {
        app: createApp({
          ...deps,
          producer,
          redisReady: () => producer.ping(),
          publicBasePath: '/pipelines/v3',
          connectors,
          connectorCheck,
          schedules: { minIntervalS: options.scheduleMinIntervalS ?? 60 },
          workspaceMaxActiveRuns: options.workspaceMaxActiveRuns,
        }),
        drain: [{ name: 'runs queue', run: () => bounded(producer.close()) }],
        disconnect: [
          { name: 'redis', run: () => redis.disconnect() },
          { name: 'connector check pool', run: () => bounded(checkPool.end()) },
        ],
      };
    },
  });
  return { ...app, queueName: queue.name };
}

/** The connector policy of the API or worker under test: the default platform databases plus the test database. */
export function testConnectorPolicy(options: { allowPrivate: boolean; resolve?: Resolver }): ConnectorPolicy {
  return connectorPolicy(
    { CONNECTORS_ALLOW_PRIVATE: options.allowPrivate, PIPELINES_PLATFORM_DATABASES: [], PIPELINES_DATABASE_URL: testDatabaseUrl('pipelines') },
    options.resolve,
  );
}

/** Removes a queue's keys from Redis (a TestApp's close() already removes every key of its prefix). */
export async function dropQueue(queueName: string, prefix?: string): Promise<void> {
  const queue = new Queue(queueName, { connection: { url: testRedisUrl() }, prefix: prefix === undefined ? undefined : queueKeyPrefix(prefix, queueName) });
  try {
    await queue.obliterate({ force: true });
  } finally {
    await queue.close();
  }
}
