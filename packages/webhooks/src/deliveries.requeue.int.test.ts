import { randomUUID } from 'node:crypto';
import { createLogger, createMetricsRegistry, type Logger, type Registry } from '@platform/core';
import { deleteRedisKeys, metricSample, serviceClient, startReceiver, testIdentity, testRedisUrl, uniqueName, waitFor, type Receiver } from '@platform/testing';
import { TEST_WEBHOOKS_CONFIG, type WebhooksConfig } from './config';
import { createDeliveryQueue, deliveryJobId, type DeliveryQueue } from './deliveries.queue';
import type { RequeuePass } from './deliveries.requeue';
import { recordOutboxEvents, type OutboxEvent } from './outbox';
import { publishOutboxBatch } from './outbox-relay';
import { startServiceWebhooks, type ServiceWebhooks } from './runtime';
import type { Sql } from './sql';
import { freshTestDatabase, testApp } from './test/app';
import { verifyWebhook } from './webhook-signature';

// Contract section 17, "nothing acknowledged is lost": a Redis failover drops the writes the old
// master had not replicated, so a delivery job the relay added (and then marked its event
// published) can vanish. Here the jobs are deleted from Redis before any worker took them, as such
// a failover would, and the requeue must give each its job back: delivered once, same webhook-id.
// Each test has a database of its own: the requeue looks at every published event of its database.

const QUEUE_NAME = 'webhooks-requeue-test';
const REQUEUE_AFTER_MS = 200;
let receiver: Receiver;
let cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
});
afterEach(async () => {
  const errors: unknown[] = [];
  for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => errors.push(err));
  cleanups = [];
  if (errors.length > 0) throw errors[0];
});
afterAll(async () => {
  await receiver.close();
});

interface Platform {
  sql: Sql;
  prefix: string;
  /** The test's own handle on the runtimes' delivery queue (same name, same prefix). */
  queue: DeliveryQueue;
  /** A workspace with `count` endpoints subscribed to every event, each on a receiver path of its own. */
  workspace(count: number): Promise<{ workspaceId: string; endpoints: { id: string; secret: string; path: string }[] }>;
  /** Writes events to the outbox as a service's transaction does. */
  writeEvents(workspaceId: string, count: number): Promise<OutboxEvent[]>;
  /** A service process's webhooks runtime with a requeue that looks every 100 ms at deliveries published 200 ms ago. */
  start(config?: Partial<WebhooksConfig>): Runtime;
}

interface Runtime {
  webhooks: ServiceWebhooks;
  registry: Registry;
  /** The requeue passes this runtime completed, in order. */
  passes(): RequeuePass[];
  requeued(): Promise<number>;
}

async function platform(database: string): Promise<Platform> {
  const { pool, sql } = await freshTestDatabase(database);
  const prefix = uniqueName('webhooks-requeue-test');
  const queue = createDeliveryQueue(QUEUE_NAME, testRedisUrl(), { prefix });
  cleanups.push(async () => {
    await queue.close();
    await deleteRedisKeys(prefix, testRedisUrl());
    await pool.end();
  });
  const app = testApp(sql, { allowPrivate: true });
  return {
    sql,
    prefix,
    queue,
    async workspace(count) {
      const c = serviceClient('events', app, testIdentity());
      const endpoints = [];
      for (let i = 0; i < count; i++) {
        const path = `/hooks/${randomUUID()}`;
        receiver.answer(path, 200);
        const { body } = await c.post('/webhook-endpoints', { url: receiver.url(path), events: ['*'] }).expect(201);
        endpoints.push({ id: body.id as string, secret: body.secret as string, path });
      }
      return { workspaceId: c.identity.workspaceId, endpoints };
    },
    async writeEvents(workspaceId, count) {
      const events: OutboxEvent[] = [];
      for (let i = 0; i < count; i++)
        events.push(...(await recordOutboxEvents(sql, [{ type: 'item.created', workspaceId, data: { id: randomUUID(), n: i } }])));
      return events;
    },
    start(config = {}) {
      const logger: Logger = createLogger('webhooks-requeue-test', 'silent');
      const debug = jest.spyOn(logger, 'debug');
      const registry = createMetricsRegistry({ defaultMetrics: false });
      const webhooks = startServiceWebhooks({
        service: 'events',
        sql,
        redis: testRedisUrl(),
        queueName: QUEUE_NAME,
        config: { ...TEST_WEBHOOKS_CONFIG, QUEUE_PREFIX: prefix, WEBHOOKS_REQUEUE_AFTER_MS: REQUEUE_AFTER_MS, WEBHOOKS_REQUEUE_INTERVAL_MS: 100, ...config },
        logger,
        metrics: registry,
      });
      cleanups.push(() => webhooks.close());
      return {
        webhooks,
        registry,
        passes: () => debug.mock.calls.filter((call) => call[1] === 'webhook requeue pass').map((call) => call[0] as RequeuePass),
        requeued: async () => metricSample(await registry.metrics(), 'webhook_deliveries_requeued_total') ?? NaN,
      };
    },
  };
}

/** Every (event, endpoint) job id. */
function jobIds(events: OutboxEvent[], endpoints: { id: string }[]): string[] {
  return events.flatMap((event) => endpoints.map((endpoint) => deliveryJobId(event.id, endpoint.id)));
}

async function published(sql: Sql, events: OutboxEvent[]): Promise<boolean> {
  const rows = await sql.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS "n" FROM "outbox_events" WHERE "id" = ANY($1::text[]) AND "published_at" IS NOT NULL`,
    events.map((e) => e.id),
  );
  return rows[0]!.n === events.length;
}

async function allCompleted(queue: DeliveryQueue, ids: string[]): Promise<boolean> {
  const states = await Promise.all(ids.map((id) => queue.getJobState(id)));
  return states.every((state) => state === 'completed');
}

/**
 * Waits until each runtime has completed a requeue pass that began once everything published before
 * this call was old enough for it to look at (published more than REQUEUE_AFTER_MS ago).
 */
async function aWholePassOfEach(runtimes: Runtime[]): Promise<void> {
  const lookedAt = Date.now() + REQUEUE_AFTER_MS + 50;
  await waitFor('the deliveries to be old enough for the requeue', () => Date.now() > lookedAt, 60_000);
  const seen = runtimes.map((r) => r.passes().filter((p) => p.ran).length);
  // The pass in flight now may have begun earlier: the second one to end began after.
  await waitFor('a whole requeue pass of each runtime', () => runtimes.every((r, i) => r.passes().filter((p) => p.ran).length >= seen[i]! + 2), 60_000);
}

test('jobs Redis lost after their events were published are added again from the database: each event is delivered once, with its webhook-id, verifiable', async () => {
  const p = await platform('webhooks_requeue_lost');
  const { workspaceId, endpoints } = await p.workspace(2);
  // Paused: the relay adds the jobs, no worker takes them.
  await p.queue.pause();
  const runtime = p.start();
  const events = await p.writeEvents(workspaceId, 5);
  const ids = jobIds(events, endpoints);
  await waitFor('the relay to publish every event', () => published(p.sql, events), 60_000);
  for (const id of ids) expect(await p.queue.getJob(id)).toBeDefined();
  // Jobs waiting in the queue without a record are looked at, and left alone.
  await waitFor('a pass to look at every waiting job', () => runtime.passes().some((pass) => pass.examined === ids.length), 60_000);
  expect(await runtime.requeued()).toBe(0);

  // The failover: every job is gone before any attempt (this also lifts the pause).
  await p.queue.obliterate({ force: true });
  for (const id of ids) expect(await p.queue.getJob(id)).toBeUndefined();

  await waitFor('every job to be added again and completed', () => allCompleted(p.queue, ids), 60_000);
  await aWholePassOfEach([runtime]);
  for (const endpoint of endpoints) {
    const got = receiver.at(endpoint.path);
    expect(got.map((r) => r.headers['webhook-id']).sort()).toEqual(events.map((e) => e.id).sort());
    for (const r of got) {
      const event = events.find((e) => e.id === r.headers['webhook-id'])!;
      expect(verifyWebhook(endpoint.secret, r.headers, r.body)).toEqual({
        id: event.id,
        type: 'item.created',
        created_at: event.createdAt.toISOString(),
        workspace_id: workspaceId,
        data: event.data,
      });
    }
  }
  expect(await runtime.requeued()).toBe(ids.length);
}, 120_000);

test('an event already delivered, whose completed job was then removed, is not delivered again', async () => {
  const p = await platform('webhooks_requeue_delivered');
  const { workspaceId, endpoints } = await p.workspace(1);
  const runtime = p.start();
  const events = await p.writeEvents(workspaceId, 3);
  const ids = jobIds(events, endpoints);
  await waitFor('every delivery to complete', () => allCompleted(p.queue, ids), 60_000);
  expect(receiver.at(endpoints[0]!.path)).toHaveLength(3);

  // Finished jobs are kept a bounded time and count: these went early.
  for (const id of ids) await p.queue.remove(id);
  for (const id of ids) expect(await p.queue.getJob(id)).toBeUndefined();

  await aWholePassOfEach([runtime]);
  for (const id of ids) expect(await p.queue.getJob(id)).toBeUndefined();
  expect(receiver.at(endpoints[0]!.path)).toHaveLength(3);
  expect(await runtime.requeued()).toBe(0);
}, 120_000);

test('two service instances requeueing the same lost jobs at once, completed jobs removed at once: each event is delivered once', async () => {
  const p = await platform('webhooks_requeue_race');
  const { workspaceId, endpoints } = await p.workspace(2);
  const events = await p.writeEvents(workspaceId, 20);
  const ids = jobIds(events, endpoints);
  // Published while no instance runs, then lost.
  await p.sql.$transaction((tx) => publishOutboxBatch(tx, p.queue, 100));
  await p.queue.obliterate({ force: true });
  for (const id of ids) expect(await p.queue.getJob(id)).toBeUndefined();

  // Completed jobs vanish as soon as they complete (as when a burst evicts them): an instance that
  // added a job again after another's had completed would deliver it twice.
  let evicting = true;
  const evicted = new Set<string>();
  const eviction = (async () => {
    while (evicting) {
      for (const id of await p.queue.clean(0, 1000, 'completed')) evicted.add(id);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  cleanups.push(async () => {
    evicting = false;
    await eviction;
  });

  const runtimes = [p.start(), p.start()];
  await waitFor('every job to complete and be removed', () => ids.every((id) => evicted.has(id)), 60_000);
  await aWholePassOfEach(runtimes);
  for (const endpoint of endpoints) {
    const got = receiver.at(endpoint.path).map((r) => r.headers['webhook-id']);
    expect(got.sort()).toEqual(events.map((e) => e.id).sort());
  }
  const requeued = await Promise.all(runtimes.map((r) => r.requeued()));
  expect(requeued[0]! + requeued[1]!).toBe(ids.length);
}, 120_000);

test("one workspace's backlog does not hold up another's lost job: the workspaces take turns in a pass", async () => {
  const p = await platform('webhooks_requeue_turns');
  const busy = await p.workspace(1);
  const other = await p.workspace(1);
  // No worker takes anything: the busy workspace's 30 jobs wait, older than the other's.
  await p.queue.pause();
  const runtime = p.start({ WEBHOOKS_REQUEUE_BATCH: 5 });
  const backlog = await p.writeEvents(busy.workspaceId, 30);
  const [lost] = await p.writeEvents(other.workspaceId, 1);
  await waitFor('the relay to publish every event', () => published(p.sql, [...backlog, lost!]), 60_000);
  const lostJob = deliveryJobId(lost!.id, other.endpoints[0]!.id);
  await p.queue.remove(lostJob);
  expect(await p.queue.getJob(lostJob)).toBeUndefined();

  await waitFor("the other workspace's job to be added again", async () => (await runtime.requeued()) === 1, 60_000);
  expect(await p.queue.getJob(lostJob)).toBeDefined();
  await p.queue.resume();
  await waitFor('every delivery', () => receiver.at(busy.endpoints[0]!.path).length === 30 && receiver.at(other.endpoints[0]!.path).length === 1, 60_000);
  expect(receiver.at(other.endpoints[0]!.path)[0]!.headers['webhook-id']).toBe(lost!.id);
}, 120_000);

test('a publication that committed late (stamped when its transaction began, before passes that already ran) is still looked at', async () => {
  const p = await platform('webhooks_requeue_late');
  const { workspaceId, endpoints } = await p.workspace(1);
  const runtime = p.start();
  await waitFor('passes that read up to now', () => runtime.passes().filter((pass) => pass.ran).length >= 3, 60_000);
  // The endpoint has been there a while (the requeue trusts only endpoints unchanged since the publication).
  await p.sql.$executeRawUnsafe(
    `UPDATE "webhook_endpoints" SET "created_at" = "created_at" - interval '1 minute', "updated_at" = "updated_at" - interval '1 minute'`,
  );
  // As a relay whose jobs Redis lost and whose commit came 20 s after its transaction began.
  const event = await p.sql.$transaction(async (tx) => {
    const [written] = await recordOutboxEvents(tx, [{ type: 'item.created', workspaceId, data: { id: randomUUID() } }]);
    await tx.$executeRawUnsafe(`UPDATE "outbox_events" SET "published_at" = CURRENT_TIMESTAMP - interval '20 seconds' WHERE "id" = $1::text`, written!.id);
    return written;
  });
  await waitFor('the delivery', () => receiver.at(endpoints[0]!.path).length === 1, 60_000);
  expect(receiver.at(endpoints[0]!.path)[0]!.headers['webhook-id']).toBe(event!.id);
  expect(await runtime.requeued()).toBe(1);
}, 120_000);
