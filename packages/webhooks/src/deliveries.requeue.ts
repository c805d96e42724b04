import type { Logger } from '@platform/core';
import { deliveryJobId, type DeliveryQueue } from './deliveries.queue';
import { deliveryJobOf } from './outbox-relay';
import { runPeriodically, type PeriodicTask } from './periodic';
import type { Sql } from './sql';
import { requeueStore } from './webhooks.store';

/** What the requeue needs of the delivery queue: its key name (for the lock), reading a job, adding one. */
export type RequeueQueue = Pick<DeliveryQueue, 'qualifiedName' | 'getJob' | 'add'>;

export interface DeliveryRequeueOptions {
  sql: Sql;
  queue: RequeueQueue;
  /** Only deliveries published at least this long ago are looked at: the relay adds the jobs before it marks the rows published. */
  afterMs: number;
  /** Nor any published longer ago than this (within the delivery records' retention). */
  lookbackMs: number;
  /** Deliveries looked at per pass. */
  batch: number;
  logger?: Logger;
  /** Told of each job added again (metrics). */
  onRequeued?: () => void;
}

/** What one pass did. */
export interface RequeuePass {
  /** False when another process's pass held the lock: this one looked at nothing. */
  ran: boolean;
  /** Published deliveries without a record that were looked for in the queue. */
  examined: number;
  /** Of those, the jobs added again. */
  requeued: number;
  /** Every delivery published before this had its record when the pass looked (absent when it did not run). */
  settledBefore?: Date;
}

/**
 * A relay's transaction stamps `published_at` when it begins and commits up to its 30 s timeout
 * later: a row can appear this long after the time it carries, so a next pass starts this much
 * before what the last one found settled.
 */
const LATE_COMMIT_MARGIN_MS = 60_000;

/**
 * Gives a job back to every delivery that Redis lost: published, no delivery record, no job in the
 * queue. The relay marks an event published only after its jobs were added, but a Redis failover
 * drops the writes the old master had not replicated yet, so a job can vanish after that. The job
 * is the relay's (same id, same body, so the same `webhook-id`); an add whose id exists is a no-op.
 *
 * A job that completed and was then removed (finished jobs are kept a bounded time) must not come
 * back: its attempt was recorded before it completed, so the records are read again after the
 * queue answered "no job". One pass at a time per queue over all processes (an advisory lock held
 * by the pass's transaction): two passes racing could otherwise both find "no job, no record", one
 * add, the worker deliver and the job be removed, and the other add again.
 *
 * `since`: where the last pass of this process found everything settled (records are never deleted
 * within the lookback, so what was settled stays settled); absent, the whole lookback is read.
 */
export async function requeueLostDeliveries(options: DeliveryRequeueOptions, since?: Date): Promise<RequeuePass> {
  const { queue, logger } = options;
  return options.sql.$transaction(
    async (tx) => {
      const store = requeueStore(tx);
      if (!(await store.tryLock(`webhooks-requeue:${queue.qualifiedName}`))) return { ran: false, examined: 0, requeued: 0 };
      const until = await store.msAgo(options.afterMs);
      const from = since ? new Date(since.getTime() - LATE_COMMIT_MARGIN_MS) : null;
      const { deliveries, oldest } = await store.unrecorded({ from, until, lookbackMs: options.lookbackMs, limit: options.batch });
      const settledBefore = oldest ?? until;
      const jobs = await Promise.all(deliveries.map((d) => queue.getJob(deliveryJobId(d.id, d.endpointId))));
      const missing = deliveries.filter((_, i) => !jobs[i]);
      if (missing.length === 0) return { ran: true, examined: deliveries.length, requeued: 0, settledBefore };
      // Records written since the first read: the worker delivered and the job was removed in between.
      const firstPublished = new Date(Math.min(...missing.map((d) => d.publishedAt.getTime())));
      const recorded = new Set(
        (
          await store.recorded(
            missing.map((d) => ({ eventId: d.id, endpointId: d.endpointId })),
            firstPublished,
          )
        ).map((r) => deliveryJobId(r.eventId, r.endpointId)),
      );
      let requeued = 0;
      for (const delivery of missing) {
        if (recorded.has(deliveryJobId(delivery.id, delivery.endpointId))) continue;
        const job = deliveryJobOf(delivery, delivery.endpointId);
        await queue.add(job.name, job.data, job.opts);
        requeued++;
        options.onRequeued?.();
        logger?.warn(
          { event_id: delivery.id, endpoint_id: delivery.endpointId, workspace_id: delivery.workspaceId, job_id: job.opts.jobId },
          'webhook delivery was published without a job (Redis lost it): job added again',
        );
      }
      return { ran: true, examined: deliveries.length, requeued, settledBefore };
    },
    // The lock is held while Redis answers; the timeout bounds that (a batch is a few round trips).
    { timeout: 30_000 },
  );
}

export type DeliveryRequeue = PeriodicTask;

/**
 * requeueLostDeliveries every `intervalMs` in every service process, each pass reading from where
 * the last one found everything settled (the first one the whole lookback); a failed pass (Redis or
 * the database away) is logged and made again next time. close() waits for the pass in flight.
 */
export function startDeliveryRequeue(options: DeliveryRequeueOptions & { intervalMs: number }): DeliveryRequeue {
  let since: Date | undefined;
  return runPeriodically(
    async () => {
      const pass = await requeueLostDeliveries(options, since);
      since = pass.settledBefore ?? since;
      options.logger?.debug(pass, 'webhook requeue pass');
    },
    {
      firstDelayMs: options.intervalMs,
      intervalMs: options.intervalMs,
      onError: (err) => options.logger?.warn({ err }, 'webhook requeue pass failed; retrying'),
    },
  );
}
