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
}

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
 */
export async function requeueLostDeliveries(options: DeliveryRequeueOptions): Promise<RequeuePass> {
  const { queue, logger } = options;
  return options.sql.$transaction(
    async (tx) => {
      const store = requeueStore(tx);
      if (!(await store.tryLock(`webhooks-requeue:${queue.qualifiedName}`))) return { ran: false, examined: 0, requeued: 0 };
      const unrecorded = await store.unrecorded({ afterMs: options.afterMs, lookbackMs: options.lookbackMs, limit: options.batch });
      const jobs = await Promise.all(unrecorded.map((d) => queue.getJob(deliveryJobId(d.id, d.endpointId))));
      const missing = unrecorded.filter((_, i) => !jobs[i]);
      if (missing.length === 0) return { ran: true, examined: unrecorded.length, requeued: 0 };
      // Records written since the first read: the worker delivered and the job was removed in between.
      const recorded = new Set(
        (await store.recorded(missing.map((d) => ({ eventId: d.id, endpointId: d.endpointId })), options.lookbackMs)).map((r) => deliveryJobId(r.eventId, r.endpointId)),
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
      return { ran: true, examined: unrecorded.length, requeued };
    },
    // The lock is held while Redis answers; the timeout bounds that (a batch is a few round trips).
    { timeout: 30_000 },
  );
}

export type DeliveryRequeue = PeriodicTask;

/**
 * requeueLostDeliveries every `intervalMs` in every service process; a failed pass (Redis or the
 * database away) is logged and made again next time. close() waits for the pass in flight.
 */
export function startDeliveryRequeue(options: DeliveryRequeueOptions & { intervalMs: number }): DeliveryRequeue {
  return runPeriodically(
    async () => {
      const pass = await requeueLostDeliveries(options);
      options.logger?.debug(pass, 'webhook requeue pass');
    },
    {
      firstDelayMs: options.intervalMs,
      intervalMs: options.intervalMs,
      onError: (err) => options.logger?.warn({ err }, 'webhook requeue pass failed; retrying'),
    },
  );
}
