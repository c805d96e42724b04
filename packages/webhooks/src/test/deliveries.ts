import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '@platform/core';
import { deleteRedisKeys, testRedisUrl, uniqueName, type Answer, type Receiver, type ServiceClient } from '@platform/testing';
import { pendingKey } from '../deliveries.fairness';
import { createDeliveryQueue, type DeliveryQueue } from '../deliveries.queue';
import { startDeliveryWorker, type UndeliverableReason } from '../deliveries.worker';
import { startOutboxRelay, type OutboxRelay } from '../outbox-relay';
import type { Sql } from '../sql';
import type { WebhookSecret } from '../webhook-signature';

/**
 * What each test of the file closes (queues, workers, relays, connections), pushed as it opens
 * them; after each test all are run, the last pushed first, even when one fails.
 */
export function closedAfterEach(): (() => Promise<unknown>)[] {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    const errors: unknown[] = [];
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((err: unknown) => errors.push(err));
    if (errors.length > 0) throw errors[0];
  });
  return cleanups;
}

/** One test's queue, worker and relays under a key prefix of their own; closed after the test, their keys deleted. */
export interface DeliveryHarness {
  prefix: string;
  queue: DeliveryQueue;
  startRelay(batchSize?: number): OutboxRelay;
  /** What the worker reported as undeliverable, in order. */
  undeliverable: UndeliverableReason[];
}

export interface DeliveryHarnessOptions {
  /** The worker's (and the queue's) retry schedule; default three steps of 30 ms. */
  schedule?: number[];
  /** Per attempt; default 2 s. */
  timeoutMs?: number;
  allowPrivate?: boolean;
  /** Start a relay at once (default true). */
  relay?: boolean;
  /** Start a delivery worker (default true). */
  worker?: boolean;
  /** The worker's slots (default the worker's own, 10). */
  concurrency?: number;
  logger?: Logger;
}

/**
 * A queue, a delivery worker and relays over `sql` for one test; what closes them (and deletes
 * their keys) goes to `cleanups`, which the test file runs in reverse after each test.
 */
export function deliveryHarness(sql: Sql, cleanups: (() => Promise<unknown>)[], options: DeliveryHarnessOptions = {}): DeliveryHarness {
  const prefix = uniqueName('webhooks-test');
  const queueName = 'webhooks-test';
  const schedule = options.schedule ?? [30, 30, 30];
  const timeoutMs = options.timeoutMs ?? 2000;
  const queue = createDeliveryQueue(queueName, testRedisUrl(), { prefix, schedule, timeoutMs });
  const undeliverable: UndeliverableReason[] = [];
  cleanups.push(async () => {
    await queue.close();
    await deleteRedisKeys(prefix, testRedisUrl());
  });
  if (options.worker ?? true) {
    const worker = startDeliveryWorker({
      sql,
      connection: { url: testRedisUrl() },
      queueName,
      prefix,
      schedule,
      timeoutMs,
      allowPrivate: options.allowPrivate ?? true,
      concurrency: options.concurrency,
      logger: options.logger,
      onUndeliverable: (reason) => undeliverable.push(reason),
    });
    cleanups.push(() => worker.close());
  }
  const startRelay = (batchSize = 50) => {
    const relay = startOutboxRelay({ sql, queue, pollIntervalMs: 20, batchSize });
    cleanups.push(() => relay.close());
    return relay;
  };
  if (options.relay ?? true) startRelay();
  return { prefix, queue, startRelay, undeliverable };
}

/** A path of its own on the receiver, answering as scripted (default 204). */
export function hookPath(receiver: Receiver, ...answers: Answer[]): { path: string; url: string } {
  const path = `/hooks/${randomUUID()}`;
  if (answers.length > 0) receiver.answer(path, ...answers);
  return { path, url: receiver.url(path) };
}

export async function createEndpoint(c: ServiceClient, url: string, events: string[] = ['*']): Promise<{ id: string; secret: WebhookSecret }> {
  return (await c.post('/webhook-endpoints', { url, events }).expect(201)).body as { id: string; secret: WebhookSecret };
}

/** True when the queue holds jobs for these endpoints and every one of them is completed or failed. */
export async function jobsDone(queue: DeliveryQueue, endpointIds: string[]): Promise<boolean> {
  const jobs = (await queue.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed', 'prioritized', 'waiting-children'])).filter((job) =>
    endpointIds.includes(job.data.endpoint_id),
  );
  const states = await Promise.all(jobs.map((job) => job.getState()));
  return jobs.length > 0 && states.every((state) => state === 'completed' || state === 'failed');
}

/** The job ids the workspace has pending in the queue (deliveries.fairness.ts), oldest first. */
export async function pendingOf(redis: Redis, queue: DeliveryQueue, workspaceId: string): Promise<string[]> {
  return redis.zrange(pendingKey(queue.qualifiedName, workspaceId), '0', '-1');
}
