import type { Server } from 'node:http';
import { createLogger, HttpMetrics, type Registry } from '@platform/core';
import { deleteRedisKeys, listenOnFreePort, TEST_INTERNAL_SECRET, testDatabaseUrl, testRedisUrl, uniqueName } from '@platform/testing';
import { startServiceWebhooks, TEST_WEBHOOKS_CONFIG, type ServiceWebhooks } from '@platform/webhooks';
import { createApp } from '../app';
import { createDatabase, type Database } from '../database';

/**
 * The events app on a real database and a real port, for integration tests; with `webhooks`,
 * also its outbox relay and delivery worker on a queue of their own with a short retry schedule.
 */
export async function startTestApp(options: { webhooks?: boolean; metrics?: Registry } = {}): Promise<{ server: Server; db: Database; close: () => Promise<void> }> {
  const db = createDatabase(testDatabaseUrl('events'));
  const logger = createLogger('events-test', 'silent');
  let webhooks: ServiceWebhooks | undefined;
  // Its delivery queue under a key prefix of its own, whose keys close() deletes.
  const queuePrefix = uniqueName('events-test');
  if (options.webhooks) {
    webhooks = startServiceWebhooks({
      service: 'events',
      sql: db,
      redisUrl: testRedisUrl(),
      config: { ...TEST_WEBHOOKS_CONFIG, QUEUE_PREFIX: queuePrefix },
      logger,
      metrics: options.metrics,
    });
  }
  const app = createApp({
    db,
    logger,
    internalSecret: TEST_INTERNAL_SECRET,
    metrics: options.metrics && new HttpMetrics(options.metrics),
    allowPrivateWebhooks: true,
    redisReady: async () => webhooks?.ping(),
  });
  const server = await listenOnFreePort(app);
  return {
    server,
    db,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await webhooks?.close();
      await db.$disconnect();
      if (webhooks) await deleteRedisKeys(queuePrefix, testRedisUrl());
    },
  };
}
