import type { Logger } from '@platform/core';
import { deliveryJobId, type DeliveryQueue } from './deliveries.queue';
import { deliveryJobOf } from './outbox-relay';
import { runPeriodically, type PeriodicTask } from '@platform/core';
import type { Sql } from './sql';
import { NOT_SENT_DISABLED } from './deliveries.worker';
import { requeueStore, type DueRetry, type RequeueStore } from './webhooks.store';

/**
 * What the requeue needs of the delivery queue: its key name (for the lock), reading a job, adding
 * one ranked among its workspace's pending deliveries as the relay's are (`prioritized`).
 */
export type RequeueQueue = Pick<DeliveryQueue, 'qualifiedName' | 'getJob' | 'add' | 'prioritized'>;

export interface DeliveryRequeueOptions {
  sql: Sql;
  queue: RequeueQueue;
  /**
   * Only deliveries published at least this long ago are looked at: the relay adds the jobs before it
   * marks the rows published. A retry is looked at once it is this long overdue.
   */
  afterMs: number;
  /** Nor any published, or retry due, longer ago than this (within the delivery records' retention). */
  lookbackMs: number;
  /** The worker's retry schedule (delays before the 2nd, 3rd, ... attempt): when a failed attempt's next one is due, and which was the last. */
  schedule: readonly number[];
  /** Deliveries looked at per pass, of each kind (without a record; retries). */
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
  /** Overdue retries (latest record a failed attempt with steps left) that were looked for in the queue. */
  retriesExamined: number;
  /** Of those, the jobs added again. */
  retriesRequeued: number;
  /** Every retry due before this had been attempted when the pass looked (absent when it did not run). */
  retriesSettledBefore?: Date;
}

/** Where a process's last pass found everything settled: publications, and retries' due times. */
export interface RequeueCursor {
  published?: Date;
  due?: Date;
}

/**
 * A relay's transaction stamps `published_at` when it begins and commits up to its 30 s timeout
 * later: a row can appear this long after the time it carries, so a next pass starts this much
 * before what the last one found settled.
 */
const LATE_COMMIT_MARGIN_MS = 60_000;

/**
 * Gives a job back to every delivery that Redis lost. Two kinds:
 *
 * - Published, no delivery record, no job in the queue. The relay marks an event published only
 *   after its jobs were added, but a Redis failover drops the writes the old master had not
 *   replicated yet, so a job can vanish after that. The job is the relay's (same id, same body, so
 *   the same `webhook-id`); an add whose id exists is a no-op.
 * - A retry: the pair's latest record is a failed attempt with a step of the schedule left, its next
 *   attempt is `afterMs` overdue, and no job in the queue (the delayed job went with a master). The
 *   job is the relay's with `attempts_made` set to the recorded attempt, so the worker numbers the
 *   next attempt after it and the schedule continues from there. It is added to run at once: the
 *   attempt is already late.
 *
 * A job that completed and was then removed (finished jobs are kept a bounded time) must not come
 * back: its attempt was recorded before it completed, so the records are read again after the
 * queue answered "no job". One pass at a time per queue over all processes (an advisory lock held
 * by the pass's transaction): two passes racing could otherwise both find "no job", one add, the
 * worker deliver and the job be removed, and the other add again.
 *
 * `since`: where the last pass of this process found everything settled (records are never deleted
 * within the lookback, so what was settled stays settled); absent, the whole lookback is read.
 */
export async function requeueLostDeliveries(options: DeliveryRequeueOptions, since: RequeueCursor = {}): Promise<RequeuePass> {
  const { queue } = options;
  return options.sql.$transaction(
    async (tx) => {
      const store = requeueStore(tx);
      if (!(await store.tryLock(`webhooks-requeue:${queue.qualifiedName}`)))
        return { ran: false, examined: 0, requeued: 0, retriesExamined: 0, retriesRequeued: 0 };
      const until = await store.msAgo(options.afterMs);
      const unrecorded = await requeueUnrecorded(store, options, until, since.published);
      const retries = await requeueRetries(store, options, until, since.due);
      return { ran: true, ...unrecorded, ...retries };
    },
    // The lock is held while Redis answers; the timeout bounds that (a batch is a few round trips).
    { timeout: 30_000 },
  );
}

/** From `since` (or the lookback), less the late-commit margin. */
function windowStart(since: Date | undefined): Date | null {
  return since ? new Date(since.getTime() - LATE_COMMIT_MARGIN_MS) : null;
}

async function requeueUnrecorded(
  store: RequeueStore,
  options: DeliveryRequeueOptions,
  until: Date,
  since: Date | undefined,
): Promise<Pick<RequeuePass, 'examined' | 'requeued' | 'settledBefore'>> {
  const { queue, logger } = options;
  const { deliveries, oldest } = await store.unrecorded({ from: windowStart(since), until, lookbackMs: options.lookbackMs, limit: options.batch });
  const settledBefore = oldest ?? until;
  const jobs = await Promise.all(deliveries.map((d) => queue.getJob(deliveryJobId(d.id, d.endpointId))));
  const missing = deliveries.filter((_, i) => !jobs[i]);
  if (missing.length === 0) return { examined: deliveries.length, requeued: 0, settledBefore };
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
  return { examined: deliveries.length, requeued, settledBefore };
}

async function requeueRetries(
  store: RequeueStore,
  options: DeliveryRequeueOptions,
  until: Date,
  since: Date | undefined,
): Promise<Pick<RequeuePass, 'retriesExamined' | 'retriesRequeued' | 'retriesSettledBefore'>> {
  const { queue, logger } = options;
  const { retries, oldest } = await store.dueRetries({
    from: windowStart(since),
    until,
    lookbackMs: options.lookbackMs,
    schedule: options.schedule,
    endedError: NOT_SENT_DISABLED,
    limit: options.batch,
  });
  const retriesSettledBefore = oldest ?? until;
  const jobs = await Promise.all(retries.map((r) => queue.getJob(deliveryJobId(r.id, r.endpointId))));
  const missing = retries.filter((_, i) => !jobs[i]);
  if (missing.length === 0) return { retriesExamined: retries.length, retriesRequeued: 0, retriesSettledBefore };
  // An attempt recorded since the first read: the job was there after all, was attempted and removed in between.
  const attempted = new Set(
    (await store.recordedAfter(missing.map((r) => ({ eventId: r.id, endpointId: r.endpointId, since: r.recordedAt })))).map((r) =>
      deliveryJobId(r.eventId, r.endpointId),
    ),
  );
  let retriesRequeued = 0;
  for (const retry of missing) {
    if (attempted.has(deliveryJobId(retry.id, retry.endpointId))) continue;
    const job = retryJobOf(retry);
    await queue.add(job.name, job.data, job.opts);
    retriesRequeued++;
    options.onRequeued?.();
    logger?.warn(
      {
        event_id: retry.id,
        endpoint_id: retry.endpointId,
        workspace_id: retry.workspaceId,
        job_id: job.opts.jobId,
        attempts_made: retry.attempt,
        due_at: retry.dueAt,
      },
      'webhook retry was due without a job (Redis lost it): job added again',
    );
  }
  return { retriesExamined: retries.length, retriesRequeued, retriesSettledBefore };
}

/** The relay's job for the pair, carrying the attempts already recorded. */
function retryJobOf(retry: DueRetry) {
  const job = deliveryJobOf(retry, retry.endpointId);
  return { ...job, data: { ...job.data, attempts_made: retry.attempt } };
}

export type DeliveryRequeue = PeriodicTask;

/**
 * requeueLostDeliveries every `intervalMs` in every service process, each pass reading from where
 * the last one found everything settled (the first one the whole lookback); a failed pass (Redis or
 * the database away) is logged and made again next time. close() waits for the pass in flight.
 */
export function startDeliveryRequeue(options: DeliveryRequeueOptions & { intervalMs: number }): DeliveryRequeue {
  let since: RequeueCursor = {};
  return runPeriodically(
    async () => {
      const pass = await requeueLostDeliveries(options, since);
      since = { published: pass.settledBefore ?? since.published, due: pass.retriesSettledBefore ?? since.due };
      options.logger?.debug(pass, 'webhook requeue pass');
    },
    {
      firstDelayMs: options.intervalMs,
      intervalMs: options.intervalMs,
      onError: (err) => options.logger?.warn({ err }, 'webhook requeue pass failed; retrying'),
    },
  );
}
