import { timestamp, type Logger } from '@platform/core';
import { DELIVERY_JOB_NAME, deliveryJobOptions, type DeliveryJob, type DeliveryQueue } from './deliveries.queue';
import type { Sql, SqlClient } from './sql';
import { runPeriodically, type PeriodicTask, type StopRequest } from '@platform/core';
import { outboxStore, type OutboxRow } from './webhooks.store';

export interface PublishResult {
  /** Outbox rows marked published. */
  events: number;
  /** Delivery jobs handed to the queue (one per event and subscribed endpoint). */
  jobs: number;
}

/** A delivery job as the queue's add takes it. */
export interface DeliveryJobToAdd {
  name: typeof DELIVERY_JOB_NAME;
  data: DeliveryJob;
  opts: ReturnType<typeof deliveryJobOptions>;
}

/** The job that delivers an outbox event to one endpoint: the relay's, and the requeue's when Redis lost it (the same id and body). */
export function deliveryJobOf(event: OutboxRow, endpointId: string): DeliveryJobToAdd {
  return {
    name: DELIVERY_JOB_NAME,
    data: {
      endpoint_id: endpointId,
      event: {
        id: event.id,
        type: event.type as DeliveryJob['event']['type'],
        created_at: timestamp(event.createdAt),
        workspace_id: event.workspaceId,
        data: event.data,
      },
      ...(event.traceparent ? { traceparent: event.traceparent } : {}),
    },
    opts: deliveryJobOptions(event.id, endpointId),
  };
}

/**
 * The producer side of the queue that the relay needs: the delivery queue's addBulk, which ranks
 * each job among its workspace's pending deliveries (`prioritized`), not any BullMQ queue's.
 */
export type DeliveryProducer = Pick<DeliveryQueue, 'addBulk' | 'prioritized'>;
/** What startOutboxRelay needs of the queue: adding jobs, and knowing when Redis is first reachable. */
export type RelayQueue = DeliveryProducer & Pick<DeliveryQueue, 'waitUntilReady'>;

/**
 * Publishes up to `batchSize` unpublished outbox rows inside the caller's transaction `tx`: claims
 * them (FOR UPDATE SKIP LOCKED), enqueues one delivery job per subscribed enabled endpoint, then
 * marks them published. The jobs are enqueued before the commit, so a crash in between leaves the
 * rows unpublished and a later run enqueues them again, which the deterministic job ids turn into
 * no-ops: at least once, never lost.
 */
export async function publishOutboxBatch(tx: SqlClient, queue: DeliveryProducer, batchSize: number): Promise<PublishResult> {
  const outbox = outboxStore(tx);
  const events = await outbox.claimUnpublished(batchSize);
  if (events.length === 0) return { events: 0, jobs: 0 };
  const endpoints = await outbox.enabledEndpoints([...new Set(events.map((e) => e.workspaceId))]);
  const jobs: DeliveryJobToAdd[] = [];
  for (const event of events) {
    for (const endpoint of endpoints) {
      if (endpoint.workspaceId !== event.workspaceId) continue;
      if (!endpoint.events.includes('*') && !endpoint.events.includes(event.type)) continue;
      jobs.push(deliveryJobOf(event, endpoint.id));
    }
  }
  // Each job's priority is its rank among its workspace's pending deliveries (deliveries.fairness.ts).
  if (jobs.length > 0) await queue.addBulk(jobs);
  await outbox.markPublished(events.map((e) => e.id));
  return { events: events.length, jobs: jobs.length };
}

export interface OutboxRelayOptions {
  sql: Sql;
  /** The service's delivery queue, from createDeliveryQueue. */
  queue: RelayQueue;
  /** Pause between polls once the outbox is drained (default 1000 ms). */
  pollIntervalMs?: number;
  /** Rows claimed per transaction (default 100). */
  batchSize?: number;
  logger?: Logger;
}

export type OutboxRelay = PeriodicTask;

/**
 * Polls the service's `outbox_events` and publishes them to the delivery queue. Any number of
 * relays may run (one per service instance): SKIP LOCKED gives each its own rows.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const batchSize = options.batchSize ?? 100;
  let queueReady = false;

  async function drain(stop: StopRequest): Promise<void> {
    if (!queueReady) {
      // Until Redis first answers there is nothing to publish to; wait here, holding no row locks.
      // (Afterwards the queue fails fast, and a batch whose enqueue fails rolls back.)
      queueReady = await Promise.race([options.queue.waitUntilReady().then(() => true), stop.whenRequested.then(() => false)]);
      if (!queueReady) return;
    }
    while (!stop.requested) {
      // The transaction holds the row locks while Redis is written; the timeout bounds that.
      const result = await options.sql.$transaction((tx) => publishOutboxBatch(tx, options.queue, batchSize), { timeout: 30_000 });
      if (result.events > 0) options.logger?.debug(result, 'outbox published');
      if (result.events < batchSize) return;
    }
  }

  return runPeriodically(drain, {
    firstDelayMs: 0,
    intervalMs: options.pollIntervalMs ?? 1000,
    // Redis or the database is down: the rows stay unpublished; try again next poll.
    onError: (err) => options.logger?.warn({ err }, 'outbox relay failed; retrying'),
  });
}
