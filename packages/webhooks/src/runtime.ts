import { registeredCounter, trackQueueDepth, type Logger, type Registry } from '@platform/core';
import type { WebhooksConfig } from './config';
import { createDeliveryQueue, deliveryQueueName } from './deliveries.queue';
import { startDeliveryWorker, type UndeliverableReason } from './deliveries.worker';
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
  /** A queue name of its own (tests); default `webhooks-<service>`, under `config.QUEUE_PREFIX`. */
  queueName?: string;
  /**
   * Where `webhook_deliveries_total{outcome}`, `webhook_deliveries_undeliverable_total{reason}` and
   * the delivery queue's `queue_depth` go; none when absent.
   */
  metrics?: Registry;
}): ServiceWebhooks {
  const { config, logger } = options;
  const prefix = config.QUEUE_PREFIX;
  const queueName = options.queueName ?? deliveryQueueName(options.service);
  const queue = createDeliveryQueue(queueName, options.redisUrl, { prefix, logger });
  if (options.metrics) trackQueueDepth(options.metrics, queue);
  const deliveries = options.metrics
    ? registeredCounter(options.metrics, 'webhook_deliveries_total', 'Webhook delivery attempts by outcome (disabled: 410 Gone disabled the endpoint).', ['outcome'])
    : undefined;
  // One child per label value, resolved once and shown from 0 on (a rate needs the series before its first increment).
  const outcomes = deliveries && { succeeded: deliveries.labels('succeeded'), failed: deliveries.labels('failed'), disabled: deliveries.labels('disabled') };
  if (outcomes) for (const child of Object.values(outcomes)) child.inc(0);
  const undeliverable = options.metrics
    ? registeredCounter(
        options.metrics,
        'webhook_deliveries_undeliverable_total',
        'Delivery jobs that could not be made, by reason (unknown_endpoint, endpoint_disabled, invalid_job); each job fails with its reason.',
        ['reason'],
      )
    : undefined;
  const reasons = undeliverable && {
    unknown_endpoint: undeliverable.labels('unknown_endpoint'),
    endpoint_disabled: undeliverable.labels('endpoint_disabled'),
    invalid_job: undeliverable.labels('invalid_job'),
  } satisfies Record<UndeliverableReason, unknown>;
  if (reasons) for (const child of Object.values(reasons)) child.inc(0);
  const relay = startOutboxRelay({ sql: options.sql, queue, pollIntervalMs: config.WEBHOOKS_RELAY_POLL_MS, logger });
  const worker = startDeliveryWorker({
    sql: options.sql,
    connection: { url: options.redisUrl },
    queueName,
    prefix,
    schedule: config.WEBHOOKS_RETRY_SCHEDULE_MS,
    timeoutMs: config.WEBHOOKS_TIMEOUT_MS,
    allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE,
    logger,
    onOutcome: outcomes && ((outcome) => outcomes[outcome].inc()),
    onUndeliverable: reasons && ((reason) => reasons[reason].inc()),
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
