import type { DeliveryQueue } from './deliveries.queue';
import { deliveryJobOf } from './outbox-relay';
import type { OutboxRow } from './webhooks.store';

/** What a resend needs of the delivery queue: the pair's job, and adding one ranked among its workspace's pending deliveries (`prioritized`). */
export type ResendQueue = Pick<DeliveryQueue, 'getJob' | 'add' | 'prioritized'>;

/**
 * How a resend reached the queue. `added`: a new job (the pair's job had finished or was gone);
 * `promoted`: the pair's job was waiting for its next retry, which now runs at once; `pending`: the
 * pair's job is about to attempt or attempting (waiting, active), and that attempt is the resend.
 */
export type ResendOutcome = 'added' | 'promoted' | 'pending';

/** Job states in which the pair's job makes no further attempt by itself. */
const FINISHED = new Set(['completed', 'failed', 'unknown']);

/**
 * Queues one more attempt of `event` to the endpoint, through the relay's job (deliveryJobOf: the
 * same job id, body and `webhook-id`), so a pair never has two jobs at once and the requeue
 * (deliveries.requeue.ts) finds the job where it looks. A finished job is replaced by one carrying
 * `attemptsMade` (the pair's latest recorded attempt): the worker numbers the new attempt after it,
 * and a failed one is retried on what is left of the schedule, as any attempt with that number is.
 */
export async function queueResend(queue: ResendQueue, event: OutboxRow, endpointId: string, attemptsMade: number): Promise<ResendOutcome> {
  const job = deliveryJobOf(event, endpointId);
  const existing = await queue.getJob(job.opts.jobId);
  if (existing) {
    const state = await existing.getState();
    if (state === 'delayed') {
      // Moved to waiting at once; a job that left "delayed" in between is about to attempt anyway.
      await existing.promote().catch(() => undefined);
      return 'promoted';
    }
    if (!FINISHED.has(state)) return 'pending';
    // A finished job's id would make the add a no-op (BullMQ keeps finished jobs for a while).
    // A worker holding it (it just moved back) refuses the removal: then its attempt is the resend.
    const removed = await existing.remove().then(
      () => true,
      () => false,
    );
    if (!removed) return 'pending';
  }
  await queue.add(job.name, { ...job.data, attempts_made: attemptsMade }, job.opts);
  return 'added';
}
