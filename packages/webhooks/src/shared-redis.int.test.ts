import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import type pg from 'pg';
import { createLogger, createMetricsRegistry, queueKeyPrefix, type Registry } from '@platform/core';
import { deleteRedisKeys, redisKeys, serviceClient, startReceiver, testIdentity, testRedisUrl, uniqueName, waitFor, type Receiver } from '@platform/testing';
import { recordOutboxEvents } from './outbox';
import { TEST_WEBHOOKS_CONFIG } from './config';
import { createDeliveryQueue, deliveryQueueName } from './deliveries.queue';
import { startServiceWebhooks, type ServiceWebhooks } from './runtime';
import type { Sql } from './sql';
import { freshTestDatabase, testApp } from './test/app';

// Contract section 11: deliveries of one platform never reach the workers of another that shares
// its Redis, and a delivery that cannot be made is recorded, never dropped silently. Two
// platforms: each its own database (endpoints, outbox), both the `events` service with its
// production queue name, on one Redis.

interface PlatformUnderTest {
  pool: pg.Pool;
  sql: Sql;
  app: Express;
  registry?: Registry;
  webhooks?: ServiceWebhooks;
}

const EVENTS_PER_PLATFORM = 13;
let receiver: Receiver;
let platforms: [PlatformUnderTest, PlatformUnderTest];
let prefixes: string[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  const databases = [await freshTestDatabase('webhooks_platform_a'), await freshTestDatabase('webhooks_platform_b')];
  platforms = databases.map(({ pool, sql }) => ({ pool, sql, app: testApp(sql, { allowPrivate: true }) })) as [PlatformUnderTest, PlatformUnderTest];
});
afterEach(async () => {
  for (const platform of platforms) {
    await platform.webhooks?.close();
    platform.webhooks = undefined;
  }
  for (const prefix of prefixes) await deleteRedisKeys(prefix, testRedisUrl());
  prefixes = [];
});
afterAll(async () => {
  await receiver.close();
  for (const platform of platforms) await platform.pool.end();
});

function start(platform: PlatformUnderTest, prefix: string): void {
  platform.registry = createMetricsRegistry({ defaultMetrics: false });
  platform.webhooks = startServiceWebhooks({
    service: 'events',
    sql: platform.sql,
    redis: testRedisUrl(),
    config: { ...TEST_WEBHOOKS_CONFIG, QUEUE_PREFIX: prefix },
    logger: createLogger('webhooks-shared-redis-test', 'silent'),
    metrics: platform.registry,
  });
}

/** A workspace with a "*" endpoint on a path of its own, and its events written to the platform's outbox. */
async function workspaceWithEvents(platform: PlatformUnderTest): Promise<{ path: string; eventIds: string[] }> {
  const c = serviceClient('events', platform.app, testIdentity());
  const path = `/hooks/${randomUUID()}`;
  receiver.answer(path, 200);
  await c.post('/webhook-endpoints', { url: receiver.url(path), events: ['*'] }).expect(201);
  const eventIds: string[] = [];
  for (let i = 0; i < EVENTS_PER_PLATFORM; i++) {
    const [event] = await recordOutboxEvents(platform.sql, [{ type: 'item.created', workspaceId: c.identity.workspaceId, data: { id: randomUUID(), n: i } }]);
    eventIds.push(event!.id);
  }
  return { path, eventIds };
}

/** True when the platform's delivery queue holds jobs and none of them is still to run. */
async function queueSettled(prefix: string): Promise<boolean> {
  const queue = createDeliveryQueue(deliveryQueueName('events'), testRedisUrl(), { prefix });
  try {
    const counts = await queue.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
    const { completed = 0, failed = 0, ...toRun } = counts;
    return completed + failed > 0 && Object.values(toRun).every((n) => n === 0);
  } finally {
    await queue.close();
  }
}

async function unknownEndpointCount(platform: PlatformUnderTest): Promise<number> {
  const line = (await platform.registry!.metrics()).split('\n').find((l) => l.startsWith('webhook_deliveries_undeliverable_total{reason="unknown_endpoint"} '));
  return Number(line?.split(' ')[1]);
}

test('two platforms on one Redis with different QUEUE_PREFIX: every event of each is delivered by its own platform, none is lost', async () => {
  prefixes = [uniqueName('platform-a'), uniqueName('platform-b')];
  start(platforms[0], prefixes[0]!);
  start(platforms[1], prefixes[1]!);
  const sides = [await workspaceWithEvents(platforms[0]), await workspaceWithEvents(platforms[1])];

  await waitFor('every event of both platforms', () => sides.every((side) => receiver.at(side.path).length >= EVENTS_PER_PLATFORM));
  // Both queues settled: a delivery made twice, or by the other platform, would have arrived by now.
  await waitFor('both queues to settle', async () => (await Promise.all(prefixes.map(queueSettled))).every(Boolean));
  for (const side of sides)
    expect(
      receiver
        .at(side.path)
        .map((r) => r.headers['webhook-id'])
        .sort(),
    ).toEqual([...side.eventIds].sort());
  for (const platform of platforms) expect(await unknownEndpointCount(platform)).toBe(0);

  // Each platform's keys live under its own prefix only, the queue's under one hash tag (one cluster slot).
  for (const prefix of prefixes) {
    const keys = await redisKeys(prefix, testRedisUrl());
    expect(keys.length).toBeGreaterThan(0);
    const queue = deliveryQueueName('events');
    expect(keys.filter((key) => !key.startsWith(`${queueKeyPrefix(prefix, queue)}:${queue}:`))).toEqual([]);
  }
});

test('two platforms misconfigured with the same prefix: a job the other platform took is a failed job, logged and counted, never dropped silently', async () => {
  const shared = uniqueName('platform-shared');
  prefixes = [shared];
  start(platforms[0], shared);
  start(platforms[1], shared);
  const sides = [await workspaceWithEvents(platforms[0]), await workspaceWithEvents(platforms[1])];
  const total = 2 * EVENTS_PER_PLATFORM;

  // Every job ends one way or the other: delivered by its own platform, or failed and counted by the other.
  const delivered = () => sides.reduce((sum, side) => sum + receiver.at(side.path).length, 0);
  const counted = async () => (await unknownEndpointCount(platforms[0])) + (await unknownEndpointCount(platforms[1]));
  await waitFor('every job to be delivered or counted', async () => delivered() + (await counted()) === total);

  const queue = createDeliveryQueue(deliveryQueueName('events'), testRedisUrl(), { prefix: shared });
  try {
    const failed = await queue.getJobs(['failed']);
    expect(failed).toHaveLength(await counted());
    for (const job of failed) expect(job.failedReason).toBe('undeliverable: unknown_endpoint');
    expect(await queue.getJobCounts('completed', 'failed')).toEqual({ completed: delivered(), failed: total - delivered() });
  } finally {
    await queue.close();
  }
});
