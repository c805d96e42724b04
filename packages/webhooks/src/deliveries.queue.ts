import { randomUUID } from 'node:crypto';
import { Queue, type BulkJobOptions, type ConnectionOptions, type JobsOptions, type QueueOptions } from 'bullmq';
import { z } from 'zod';
import { EVENT_TYPES, queueKeyPrefix, TraceParent, Uuid, type Logger } from '@platform/core';
import { pendingHorizonMs, rankPending, workspaceOf } from './deliveries.fairness';

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

/** Delays before the 2nd, 3rd, ... attempt (contract section 11): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** A receiver slower than this is a failed attempt (contract section 11). */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;

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

export function deliveryJobOptions(eventId: string, endpointId: string): JobsOptions & { jobId: string } {
  return {
    jobId: deliveryJobId(eventId, endpointId),
    attempts: MAX_ATTEMPTS,
    backoff: { type: DELIVERY_BACKOFF },
    removeOnComplete: KEEP_COMPLETED,
    removeOnFail: KEEP_FAILED,
  };
}

/** A job as the delivery queue's add takes it. */
export interface DeliveryJobToQueue<Opts extends JobsOptions = BulkJobOptions> {
  name: typeof DELIVERY_JOB_NAME;
  data: DeliveryJob;
  opts?: Opts;
}

/**
 * The service's delivery queue, fair between workspaces (deliveries.fairness.ts): every add, by any
 * producer (the relay, the requeue, a resend), first records its jobs among their workspaces'
 * pending deliveries and adds each with its rank as its BullMQ priority. A job without an id gets
 * one, so it can be counted and removed when it ends.
 */
export class DeliveryQueue extends Queue<DeliveryJob, void, typeof DELIVERY_JOB_NAME> {
  constructor(
    name: string,
    opts: QueueOptions,
    /** How long a delivery can stay pending (pendingHorizonMs): older entries stop counting. */
    readonly pendingHorizonMs: number,
  ) {
    super(name, opts);
  }

  /** The jobs with their ids and priorities, recorded as pending: what add and addBulk add. */
  async prioritized<Opts extends JobsOptions>(
    jobs: readonly DeliveryJobToQueue<Opts>[],
  ): Promise<(DeliveryJobToQueue<Opts> & { opts: Opts & { jobId: string; priority: number } })[]> {
    const identified = jobs.map((job) => ({ ...job, opts: { ...job.opts, jobId: job.opts?.jobId ?? randomUUID() } as Opts & { jobId: string } }));
    const priorities = await rankPending(
      this,
      identified.map((job) => ({ jobId: job.opts.jobId, workspaceId: workspaceOf(job.data) })),
      this.pendingHorizonMs,
    );
    return identified.map((job, i) => ({ ...job, opts: { ...job.opts, priority: priorities[i]! } }));
  }

  override async add(name: typeof DELIVERY_JOB_NAME, data: DeliveryJob, opts?: JobsOptions) {
    const [job] = await this.prioritized([{ name, data, opts }]);
    return super.add(job!.name, job!.data, job!.opts);
  }

  override async addBulk(jobs: DeliveryJobToQueue[]) {
    return super.addBulk(await this.prioritized(jobs));
  }
}

/**
 * The producer side of the delivery queue, under the deployment's key prefix (QUEUE_PREFIX): the
 * worker must be given the same prefix, and the same `schedule` and `timeoutMs` (default the
 * contract's), which bound how long a delivery stays pending. With connection options (or a URL),
 * its Redis client fails fast while Redis is down (`enableOfflineQueue: false`): an add rejects at
 * once instead of waiting, so the relay's transaction rolls back and the rows wait for the next
 * poll. A passed client is used as it is. Connection errors go to `logger` (else BullMQ prints them).
 */
export function createDeliveryQueue(
  name: string,
  connection: ConnectionOptions | string,
  options: { prefix: string; logger?: Logger; schedule?: readonly number[]; timeoutMs?: number },
): DeliveryQueue {
  const { prefix, logger } = options;
  const redis: ConnectionOptions =
    typeof connection === 'string'
      ? { url: connection, enableOfflineQueue: false }
      : isClient(connection)
        ? connection
        : { ...connection, enableOfflineQueue: false };
  const horizon = pendingHorizonMs(options.schedule ?? DEFAULT_RETRY_SCHEDULE_MS, options.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS);
  const queue = new DeliveryQueue(name, { connection: redis, prefix: queueKeyPrefix(prefix, name) }, horizon);
  if (logger) queue.on('error', (err) => logger.warn({ err, queue: name }, 'delivery queue: Redis error'));
  return queue;
}

function isClient(connection: ConnectionOptions): boolean {
  return typeof (connection as { duplicate?: unknown }).duplicate === 'function';
}
