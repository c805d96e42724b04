import {
  closeRedisConnection,
  createRedisConnection,
  registeredCounter,
  trackQueueDepth,
  type Logger,
  type RedisTargetLike,
  type Registry,
} from '@platform/core';
import type { WebhooksConfig } from './config';
import { createDeliveryQueue, DEFAULT_RETRY_SCHEDULE_MS, deliveryQueueName } from './deliveries.queue';
import { startDeliveryRequeue } from './deliveries.requeue';
import type { ResendQueue } from './deliveries.resend';
import { DELIVERY_OUTCOMES, startDeliveryWorker, UNDELIVERABLE_REASONS } from './deliveries.worker';
import { startOutboxRelay } from './outbox-relay';
import { PRUNED_TABLES, startRetentionPruner, type RetentionPrunerOptions } from './retention';
import type { Sql } from './sql';

type CounterChild = { inc(value?: number): void };

/**
 * A counter's child for each value of its one label, resolved once and shown from 0 on (a rate
 * needs the series before its first increment); undefined without a registry.
 */
function labelledCounter<V extends string>(
  registry: Registry | undefined,
  name: string,
  help: string,
  label: string,
  values: readonly V[],
): Record<V, CounterChild> | undefined {
  if (!registry) return undefined;
  const counter = registeredCounter(registry, name, help, [label]);
  const children = Object.fromEntries(values.map((value) => [value, counter.labels(value)])) as Record<V, CounterChild>;
  for (const child of Object.values<CounterChild>(children)) child.inc(0);
  return children;
}

export interface ServiceWebhooks {
  /** Resolves when Redis answers (for /readyz). */
  ping(): Promise<void>;
  /** The delivery queue's producer side, which the API's resend adds to (it fails fast while Redis is down). */
  queue: ResendQueue;
  /** Stops the relay, the requeue and the retention pruner, lets the delivery and the delete in progress finish, closes the queue; idempotent. */
  close(): Promise<void>;
}

/**
 * Everything a service runs for its webhooks: the outbox relay, the delivery queue, the
 * delivery worker, the requeue of jobs Redis lost and the retention pruner, over the service's own
 * database and Redis.
 */
export function startServiceWebhooks(options: {
  service: string;
  sql: Sql;
  /** The service's Redis (any topology); the runtime makes its own connections to it and closes them. */
  redis: RedisTargetLike;
  config: WebhooksConfig;
  logger: Logger;
  /** A queue name of its own (tests); default `webhooks-<service>`, under `config.QUEUE_PREFIX`. */
  queueName?: string;
  /**
   * Where `webhook_deliveries_total{outcome}`, `webhook_deliveries_undeliverable_total{reason}`,
   * `webhook_records_pruned_total{table}`, `webhook_deliveries_requeued_total` and the delivery queue's
   * `queue_depth` go; none when absent.
   */
  metrics?: Registry;
  /** When the retention pruner runs (tests); default a minute after start, then hourly. */
  retentionSchedule?: Pick<RetentionPrunerOptions, 'firstRunDelayMs' | 'intervalMs'>;
}): ServiceWebhooks {
  const { config, logger } = options;
  const prefix = config.QUEUE_PREFIX;
  const queueName = options.queueName ?? deliveryQueueName(options.service);
  // The relay enqueues and /readyz reads through a producer connection that fails fast; the worker's waits for Redis.
  const producerRedis = createRedisConnection(options.redis, { name: `webhooks-${options.service}-queue`, role: 'producer', logger });
  const workerRedis = createRedisConnection(options.redis, { name: `webhooks-${options.service}-worker`, role: 'worker' });
  // The requeue and the queue's fairness must know the worker's schedule: when a retry is due, which
  // attempt was the last, and how long a delivery can stay pending.
  const schedule = config.WEBHOOKS_RETRY_SCHEDULE_MS ?? DEFAULT_RETRY_SCHEDULE_MS;
  const queue = createDeliveryQueue(queueName, producerRedis, { prefix, logger, schedule, timeoutMs: config.WEBHOOKS_TIMEOUT_MS });
  if (options.metrics) trackQueueDepth(options.metrics, queue);
  const outcomes = labelledCounter(
    options.metrics,
    'webhook_deliveries_total',
    'Webhook delivery attempts by outcome (disabled: 410 Gone disabled the endpoint).',
    'outcome',
    DELIVERY_OUTCOMES,
  );
  const reasons = labelledCounter(
    options.metrics,
    'webhook_deliveries_undeliverable_total',
    'Delivery jobs that could not be made, by reason (unknown_endpoint, endpoint_disabled, invalid_job); each job fails with its reason.',
    'reason',
    UNDELIVERABLE_REASONS,
  );
  const pruned = labelledCounter(
    options.metrics,
    'webhook_records_pruned_total',
    'Webhook records deleted past their retention, by table (outbox_events: published rows; webhook_deliveries: delivery records).',
    'table',
    PRUNED_TABLES,
  );
  const requeued = options.metrics
    ? registeredCounter(
        options.metrics,
        'webhook_deliveries_requeued_total',
        'Delivery jobs added again because Redis had lost them: published without a delivery record, or a retry overdue after a failed attempt.',
        [],
      )
    : undefined;
  requeued?.inc(0);
  const relay = startOutboxRelay({ sql: options.sql, queue, pollIntervalMs: config.WEBHOOKS_RELAY_POLL_MS, logger });
  const requeue = startDeliveryRequeue({
    sql: options.sql,
    queue,
    afterMs: config.WEBHOOKS_REQUEUE_AFTER_MS,
    intervalMs: config.WEBHOOKS_REQUEUE_INTERVAL_MS,
    lookbackMs: config.WEBHOOKS_REQUEUE_LOOKBACK_MS,
    schedule,
    batch: config.WEBHOOKS_REQUEUE_BATCH,
    logger,
    onRequeued: requeued && (() => requeued.inc()),
  });
  const worker = startDeliveryWorker({
    sql: options.sql,
    connection: workerRedis,
    queueName,
    prefix,
    schedule,
    timeoutMs: config.WEBHOOKS_TIMEOUT_MS,
    allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE,
    lockDurationMs: config.WEBHOOKS_LOCK_DURATION_MS,
    stalledIntervalMs: config.WEBHOOKS_STALLED_INTERVAL_MS,
    logger,
    onOutcome: outcomes && ((outcome) => outcomes[outcome].inc()),
    onUndeliverable: reasons && ((reason) => reasons[reason].inc()),
  });
  const retention = startRetentionPruner({
    sql: options.sql,
    periods: { outboxDays: config.WEBHOOKS_OUTBOX_RETENTION_DAYS, deliveryDays: config.WEBHOOKS_DELIVERY_RETENTION_DAYS },
    ...options.retentionSchedule,
    logger,
    onPruned: pruned && ((table, count) => pruned[table].inc(count)),
  });
  let closing: Promise<void> | undefined;
  return {
    queue,
    async ping() {
      await queue.getJobCounts('wait');
    },
    close() {
      closing ??= (async () => {
        await relay.close();
        await requeue.close();
        await retention.close();
        await worker.close();
        await queue.close();
        await Promise.all([closeRedisConnection(producerRedis), closeRedisConnection(workerRedis)]);
      })();
      return closing;
    },
  };
}
