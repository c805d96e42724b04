import type { Server } from 'node:http';
import { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { createLogger, HttpMetrics, type Registry } from '@platform/core';
import { listenOnFreePort, TEST_INTERNAL_SECRET, testDatabaseUrl, testRedisUrl, uniqueName } from '@platform/testing';
import { startServiceWebhooks, TEST_WEBHOOKS_CONFIG } from '@platform/webhooks';
import { createApp } from '../app';
import { createDatabase, type Database } from '../database';
import { createRunsProducer } from '../runs.queue';

export interface TestApp {
  server: Server;
  db: Database;
  queueName: string;
  close: () => Promise<void>;
}

function bounded(promise: Promise<unknown>, ms = 2_000): Promise<void> {
  return Promise.race([promise.then(() => undefined, () => undefined), new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);
}

/**
 * The pipelines API on a real database, a real Redis and a real port, producing to its own queue
 * (`queueName`, unique unless given). `redisUrl` may point nowhere to play a Redis outage.
 */
export async function startTestApp(
  options: { queueName?: string; redisUrl?: string; enqueueTimeoutMs?: number; backoffMs?: number; webhooks?: boolean; metrics?: Registry } = {},
): Promise<TestApp> {
  const queueName = options.queueName ?? uniqueName('runs-test');
  const logger = createLogger('pipelines-test', 'silent');
  const db = createDatabase(testDatabaseUrl('pipelines'));
  const redis = new Redis(options.redisUrl ?? testRedisUrl(), { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 1_000 });
  redis.on('error', () => undefined);
  const producer = createRunsProducer({ redis, queueName, backoffMs: options.backoffMs ?? 100, timeoutMs: options.enqueueTimeoutMs ?? 1_000, logger });
  const webhooks = options.webhooks
    ? startServiceWebhooks({ service: 'pipelines', queueName: uniqueName('webhooks-pipelines-test'), sql: db, redisUrl: testRedisUrl(), config: TEST_WEBHOOKS_CONFIG, logger, metrics: options.metrics })
    : undefined;
  const app = createApp({ db, producer, logger, internalSecret: TEST_INTERNAL_SECRET, publicBasePath: '/pipelines/v3', allowPrivateWebhooks: true, metrics: options.metrics && new HttpMetrics(options.metrics) });
  const server = await listenOnFreePort(app);
  return {
    server,
    db,
    queueName,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await bounded(producer.close());
      await webhooks?.close();
      redis.disconnect();
      await db.$disconnect();
    },
  };
}

/** Removes a test queue's keys from Redis. */
export async function dropQueue(queueName: string): Promise<void> {
  const queue = new Queue(queueName, { connection: { url: testRedisUrl() } });
  try {
    await queue.obliterate({ force: true });
  } finally {
    await queue.close();
  }
}
