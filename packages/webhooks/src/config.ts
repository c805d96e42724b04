import { z } from 'zod';
import { DEFAULT_QUEUE_PREFIX, env, QueuePrefix } from '@platform/core';

const durations = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'must be comma-separated milliseconds')
  .transform((value) => value.split(',').map(Number));

// The shape lives in core: the gateway follows QUEUE_PREFIX too and does not depend on webhooks.
export { DEFAULT_QUEUE_PREFIX, QueuePrefix };

/**
 * The webhook variables; a service adds them to its own config schema
 * (`ServiceConfig.extend(WebhooksConfig.shape)`) and parses once at start.
 */
export const WebhooksConfig = z.object({
  /** The deployment's queue key prefix, shared by every deployable of one platform (the runs queue too). */
  QUEUE_PREFIX: QueuePrefix.default(DEFAULT_QUEUE_PREFIX),
  /** Accept private and loopback targets (tests, local use only). */
  WEBHOOKS_ALLOW_PRIVATE: env.boolean(false),
  /** Delays before each retry in ms; unset = the contract's 5 s ... 10 h. */
  WEBHOOKS_RETRY_SCHEDULE_MS: durations.optional(),
  WEBHOOKS_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  WEBHOOKS_RELAY_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  /**
   * A delivery job's lock not renewed this long means its process died: the job goes back to the
   * queue at the next stalled check. Above the longest attempt is not needed (BullMQ renews the lock
   * at half the duration while the attempt runs).
   */
  WEBHOOKS_LOCK_DURATION_MS: z.coerce.number().int().min(500).max(600_000).default(30_000),
  WEBHOOKS_STALLED_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** Days a published outbox row is kept after `published_at` (unpublished rows are never deleted). */
  WEBHOOKS_OUTBOX_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(7),
  /** Days a delivery record (`GET /webhook-endpoints/{id}/deliveries`) is kept after `created_at`, as Stripe keeps events 30 days. */
  WEBHOOKS_DELIVERY_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /**
   * A delivery published this long ago with neither a delivery record nor a job in the queue lost its
   * job (a Redis failover drops writes not yet replicated) and is enqueued again (deliveries.requeue.ts);
   * so is a retry this long overdue after a failed attempt, without a job. With the interval, 30 s + 15 s
   * keeps the contract's 60 s (section 17).
   */
  WEBHOOKS_REQUEUE_AFTER_MS: z.coerce.number().int().min(100).max(120_000).default(30_000),
  WEBHOOKS_REQUEUE_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(15_000),
  /**
   * How far back the requeue looks (publications, and retries' due times): a job lost in an outage
   * longer than this is not found. A process's first pass reads this whole span (later ones only what
   * was not settled yet), so it is kept short; at most a day, within the shortest delivery retention,
   * so a record it relies on is never pruned yet.
   */
  WEBHOOKS_REQUEUE_LOOKBACK_MS: z.coerce.number().int().min(300_000).max(86_400_000).default(900_000),
  /** Deliveries looked at per requeue pass. */
  WEBHOOKS_REQUEUE_BATCH: z.coerce.number().int().min(1).max(10_000).default(100),
});
export type WebhooksConfig = z.infer<typeof WebhooksConfig>;

/**
 * Webhook settings for integration tests: loopback receivers, retries within milliseconds. A test
 * that starts a runtime gives it a QUEUE_PREFIX of its own and deletes its keys afterwards.
 */
export const TEST_WEBHOOKS_CONFIG: WebhooksConfig = {
  QUEUE_PREFIX: 'platform-test',
  WEBHOOKS_ALLOW_PRIVATE: true,
  WEBHOOKS_RETRY_SCHEDULE_MS: [50, 100],
  WEBHOOKS_TIMEOUT_MS: 2000,
  WEBHOOKS_RELAY_POLL_MS: 50,
  WEBHOOKS_LOCK_DURATION_MS: 30_000,
  WEBHOOKS_STALLED_INTERVAL_MS: 30_000,
  WEBHOOKS_OUTBOX_RETENTION_DAYS: 7,
  WEBHOOKS_DELIVERY_RETENTION_DAYS: 30,
  // Off in effect: a service's test database holds the events of many tests, each with its own queue,
  // and an event does not name its queue, so one test's requeue would send another's events again.
  // The requeue's own tests set small values on a database of their own.
  WEBHOOKS_REQUEUE_AFTER_MS: 30_000,
  WEBHOOKS_REQUEUE_INTERVAL_MS: 3_600_000,
  WEBHOOKS_REQUEUE_LOOKBACK_MS: 900_000,
  WEBHOOKS_REQUEUE_BATCH: 100,
};
