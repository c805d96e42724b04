import type { Logger } from '@platform/core';
import type { WebhooksConfig } from './config';
import { createDeliveryQueue, deliveryQueueName } from './deliveries.queue';
import { startDeliveryWorker } from './deliveries.worker';
import { startOutboxRelay } from './outbox-relay';
import type { Sql } from './sql';

export interface ServiceWebhooks {
  /** Resolves when Redis answers (for /readyz). */
  ping(): Promise<void>;
  /** Stops the relay, lets the delivery in progress finish, closes the queue; idempotent. */
  close(): Promise<void>;
}

/**
 * Everything a service runs for its webhooks: the outbox relay, the delivery queue and the
 * delivery worker, over the service's own database and Redis.
 */
export function startServiceWebhooks(options: {
  service: string;
  sql: Sql;
  redisUrl: string;
  config: WebhooksConfig;
  logger: Logger;
  /** A queue name of its own (tests); default `webhooks-<service>`. */
  queueName?: string;
}): ServiceWebhooks {
  const { config, logger } = options;
  const queueName = options.queueName ?? deliveryQueueName(options.service);
  const queue = createDeliveryQueue(queueName, options.redisUrl, logger);
  const relay = startOutboxRelay({ sql: options.sql, queue, pollIntervalMs: config.WEBHOOKS_RELAY_POLL_MS, logger });
  const worker = startDeliveryWorker({
    sql: options.sql,
    connection: { url: options.redisUrl },
    queueName,
    schedule: config.WEBHOOKS_RETRY_SCHEDULE_MS,
    timeoutMs: config.WEBHOOKS_TIMEOUT_MS,
    allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE,
    logger,
  });
  let closing: Promise<void> | undefined;
  return {
    async ping() {
      await queue.getJobCounts('wait');
    },
    close() {
      closing ??= (async () => {
        await relay.close();
        await worker.close();
        await queue.close();
      })();
      return closing;
    },
  };
}
