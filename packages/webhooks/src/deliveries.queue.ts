import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { z } from 'zod';
import { EVENT_TYPES, queueKeyPrefix, TraceParent, Uuid, type Logger } from '@platform/core';

/**
 * The delivery queue contract shared by the producer (the outbox relay) and the delivery worker:
 * queue name, job name, payload schema and job options live here and nowhere else.
 */

/** Each service has its own delivery queue, e.g. `webhooks-events`, under the deployment's QUEUE_PREFIX. */
export function deliveryQueueName(service: string): string {
  return `webhooks-${service}`;
}

export const DELIVERY_JOB_NAME = 'deliver';

/** The event as it is POSTed (contract section 11). */
export const WebhookEventPayload = z.strictObject({
  id: z.string().regex(/^evt_[0-9A-Z]{26}$/, 'must be an event id'),
  type: z.enum(EVENT_TYPES),
  created_at: z.string(),
  workspace_id: Uuid,
  data: z.record(z.string(), z.unknown()),
});
export type WebhookEventPayload = z.infer<typeof WebhookEventPayload>;

/**
 * One job per (event, endpoint); the event travels whole so every retry sends the same body.
 * `traceparent`: the span of the change that caused the event (tracing on); each attempt's span links to it.
 * `attempts_made`: attempts recorded before this job was added (the requeue of a retry Redis lost,
 * deliveries.requeue.ts); the worker numbers attempts and follows the schedule from there. Absent: none.
 */
// The envelope drops a field this version does not know (a producer one version ahead, during a rolling
// upgrade: a worker of the previous version numbers a requeued retry's attempts from 1 again); the event
// itself stays strict, since it is the body every receiver gets.
export const DeliveryJob = z.object({
  endpoint_id: Uuid,
  event: WebhookEventPayload,
  traceparent: TraceParent.optional(),
  attempts_made: z.number().int().min(0).max(1000).optional(),
});
export type DeliveryJob = z.infer<typeof DeliveryJob>;

/** The attempts made before a job's own (its `attempts_made`), read from a payload not parsed yet: 0 when absent or malformed. */
export function priorAttempts(data: unknown): number {
  const made = (data as { attempts_made?: unknown } | null | undefined)?.attempts_made;
  return typeof made === 'number' && Number.isInteger(made) && made >= 0 ? made : 0;
}

export type DeliveryQueue = Queue<DeliveryJob, void, typeof DELIVERY_JOB_NAME>;

/**
 * Deterministic, so a relay that re-enqueues after a crash (enqueued, not yet marked published)
 * adds nothing: BullMQ ignores an add whose job id exists. `:` is reserved in BullMQ job ids.
 */
export function deliveryJobId(eventId: string, endpointId: string): string {
  return `${eventId}.${endpointId}`;
}

/** The worker's custom backoff strategy, which applies the retry schedule (deliveries.worker.ts). */
export const DELIVERY_BACKOFF = 'webhook-schedule';

/**
 * An upper bound only: the worker's schedule decides when to stop (its backoff strategy returns -1
 * after the last step), so producer and worker never disagree about the schedule.
 */
const MAX_ATTEMPTS = 100;

/**
 * Finished jobs are kept so their ids keep deduplicating re-enqueues; a relay re-enqueues only
 * rows it claimed and failed to mark, within seconds, so a day (or the last 10,000) is ample; an
 * id already dropped costs at most a second delivery, which at-least-once allows.
 * Failed jobs (retries used up, or undeliverable) are kept a week for operators; every attempt is
 * also in `webhook_deliveries` (an undeliverable job is also logged and counted). The counts cap
 * what a burst of failures can put in the Redis that also holds rate limits: a job carries its
 * event (typically 1-2 KB), so each state stays within some 10-20 MB per service.
 */
const KEEP_COMPLETED = { age: 24 * 60 * 60, count: 10_000 };
const KEEP_FAILED = { age: 7 * 24 * 60 * 60, count: 10_000 };

export function deliveryJobOptions(eventId: string, endpointId: string): JobsOptions {
  return {
    jobId: deliveryJobId(eventId, endpointId),
    attempts: MAX_ATTEMPTS,
    backoff: { type: DELIVERY_BACKOFF },
    removeOnComplete: KEEP_COMPLETED,
    removeOnFail: KEEP_FAILED,
  };
}

/**
 * The producer side of the delivery queue, under the deployment's key prefix (QUEUE_PREFIX): the
 * worker must be given the same prefix. With connection options (or a URL), its Redis client
 * fails fast while Redis is down (`enableOfflineQueue: false`): an add rejects at once instead of
 * waiting, so the relay's transaction rolls back and the rows wait for the next poll. A passed
 * client is used as it is. Connection errors go to `logger` (else BullMQ prints them).
 */
export function createDeliveryQueue(name: string, connection: ConnectionOptions | string, options: { prefix: string; logger?: Logger }): DeliveryQueue {
  const { prefix, logger } = options;
  const redis: ConnectionOptions =
    typeof connection === 'string'
      ? { url: connection, enableOfflineQueue: false }
      : isClient(connection)
        ? connection
        : { ...connection, enableOfflineQueue: false };
  const queue = new Queue<DeliveryJob, void, typeof DELIVERY_JOB_NAME>(name, { connection: redis, prefix: queueKeyPrefix(prefix, name) });
  if (logger) queue.on('error', (err) => logger.warn({ err, queue: name }, 'delivery queue: Redis error'));
  return queue;
}

function isClient(connection: ConnectionOptions): boolean {
  return typeof (connection as { duplicate?: unknown }).duplicate === 'function';
}
