import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { closeRedisConnection, createRedisConnection, queueKeyPrefix, type RedisTarget } from '@platform/core';
import { serviceClient, startReceiver, testIdentity, testRedisUrl, waitFor, type Answer, type Receiver } from '@platform/testing';
import { startRedisCluster, uniqueName } from '@platform/testing';
import { pendingKey } from './deliveries.fairness';
import { createDeliveryQueue, DELIVERY_JOB_NAME, deliveryJobId, deliveryJobOptions, type DeliveryJob, type DeliveryQueue } from './deliveries.queue';
import { startDeliveryWorker } from './deliveries.worker';
import { recordOutboxEvents } from './outbox';
import { startOutboxRelay, type DeliveryJobToAdd } from './outbox-relay';
import { freshTestDatabase, testApp } from './test/app';
import {
  closedAfterEach,
  createEndpoint,
  deliveryHarness,
  hookPath as hookPathOf,
  jobsDone,
  pendingOf as pendingIn,
  type DeliveryHarnessOptions,
} from './test/deliveries';
import type { Sql } from './sql';

// Fair delivery between workspaces (deliveries.fairness.ts), on a database of its own: no relay of
// another test file publishes these events to its queue.
let pool: { end(): Promise<void> };
let sql: Sql;
let app: ReturnType<typeof testApp>;
const redis = new Redis(testRedisUrl());
let receiver: Receiver;

beforeAll(async () => {
  [{ pool, sql }, receiver] = await Promise.all([freshTestDatabase('webhooks_fairness'), startReceiver()]);
  app = testApp(sql, { allowPrivate: true });
});
afterAll(async () => {
  await receiver?.close();
  await pool?.end();
  redis.disconnect();
});

const cleanups = closedAfterEach();

const harness = (options?: DeliveryHarnessOptions) => deliveryHarness(sql, cleanups, options);
const hookPath = (...answers: Answer[]) => hookPathOf(receiver, ...answers);
const pendingOf = (queue: DeliveryQueue, workspaceId: string) => pendingIn(redis, queue, workspaceId);

/** What a service does in its transaction: write the outbox row. */
async function writeEvent(workspaceId: string) {
  const [event] = await recordOutboxEvents(sql, [{ type: 'item.created', workspaceId, data: { id: randomUUID() } }]);
  return event!;
}

describe('fair delivery between workspaces (deliveries.fairness.ts)', () => {
  /** A delivery job of the workspace as a producer hands it to the queue (the endpoint is not looked up: no worker runs). */
  function jobOf(workspaceId: string): DeliveryJobToAdd {
    const eventId = `evt_${randomUUID().replace(/-/g, '').slice(0, 26).toUpperCase()}`;
    const endpointId = randomUUID();
    const data: DeliveryJob = {
      endpoint_id: endpointId,
      event: { id: eventId, type: 'ticket.validated', created_at: '2024-12-01T09:30:00.000Z', workspace_id: workspaceId, data: { id: randomUUID() } },
    };
    return { name: DELIVERY_JOB_NAME, data, opts: deliveryJobOptions(eventId, endpointId) };
  }

  async function priorities(queue: DeliveryQueue, jobIds: string[]): Promise<(number | undefined)[]> {
    return Promise.all(jobIds.map(async (id) => (await queue.getJob(id))?.priority));
  }

  /** Redis's clock, which the pending sets are scored by (ms). */
  async function redisNow(): Promise<number> {
    const [seconds, micros] = await redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  test("a workspace's backlog behind a receiver that holds every request does not delay another's delivery; once released, all of it arrives", async () => {
    // Two worker slots; an attempt gives up after 1 s, as a real one does after 10 s.
    const { queue } = harness({ concurrency: 2, timeoutMs: 1000, schedule: [50, 50, 50, 50] });
    const a = serviceClient('events', app, testIdentity());
    const b = serviceClient('events', app, testIdentity());
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow = hookPath({ until: released, status: 200 });
    const fast = hookPath(200);
    const slowEndpoint = await createEndpoint(a, slow.url);
    const fastEndpoint = await createEndpoint(b, fast.url);
    const flood = await recordOutboxEvents(
      sql,
      Array.from({ length: 40 }, (_, n) => ({ type: 'item.created' as const, workspaceId: a.identity.workspaceId, data: { id: randomUUID(), n } })),
    );
    const floodJobs = flood.map((event) => deliveryJobId(event.id, slowEndpoint.id));
    await waitFor("A's 40 jobs in the queue", async () => (await priorities(queue, floodJobs)).every((p) => p !== undefined));
    await waitFor("A's first deliveries to hold both slots", () => receiver.at(slow.path).length >= 2);

    const event = await writeEvent(b.identity.workspaceId);
    await waitFor("B's delivery", () => receiver.at(fast.path).length === 1);
    // Served in turn: at most a few of A's attempts went first (those holding the slots, then a retry).
    expect(receiver.at(slow.path).length).toBeLessThanOrEqual(10);
    expect(receiver.at(fast.path)[0]!.headers['webhook-id']).toBe(event.id);
    // Each job's priority is its rank among its workspace's pending deliveries.
    expect((await queue.getJob(deliveryJobId(event.id, fastEndpoint.id)))!.priority).toBe(1);
    expect((await priorities(queue, floodJobs)).sort((x, y) => x! - y!)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));

    release();
    const distinct = () => new Set(receiver.at(slow.path).map((r) => r.headers['webhook-id']));
    await waitFor("every one of A's events", () => distinct().size === 40);
    await waitFor('every job to end', () => jobsDone(queue, [slowEndpoint.id, fastEndpoint.id]));
    expect(distinct()).toEqual(new Set(flood.map((e) => e.id)));
    expect(await Promise.all(floodJobs.map((id) => queue.getJobState(id)))).toEqual(new Array(40).fill('completed'));
    // Each delivery left its workspace's pending ones when it ended: nothing is left to count.
    await waitFor(
      'nothing pending',
      async () => (await pendingOf(queue, a.identity.workspaceId)).length + (await pendingOf(queue, b.identity.workspaceId)).length === 0,
    );
  });

  test('a retry keeps its place: the job stays pending with its priority while it waits, and leaves when it ends', async () => {
    // The retry waits until the test promotes it.
    const { queue } = harness({ schedule: [3_600_000] });
    const c = serviceClient('events', app, testIdentity());
    const workspaceId = c.identity.workspaceId;
    const hook = hookPath(500, 200);
    const endpoint = await createEndpoint(c, hook.url);
    const retried = deliveryJobId((await writeEvent(workspaceId)).id, endpoint.id);
    await waitFor('the retry to wait', async () => (await queue.getJobState(retried)) === 'delayed');
    expect(await pendingOf(queue, workspaceId)).toEqual([retried]);

    // A delivery of the workspace added meanwhile ranks after it, and leaves when it has arrived.
    const later = deliveryJobId((await writeEvent(workspaceId)).id, endpoint.id);
    await waitFor('the later delivery', async () => (await queue.getJobState(later)) === 'completed');
    expect((await queue.getJob(later))!.priority).toBe(2);
    await waitFor('only the retry pending', async () => (await pendingOf(queue, workspaceId)).join() === retried);

    await (await queue.getJob(retried))!.promote();
    await waitFor('the retry to arrive', async () => (await queue.getJobState(retried)) === 'completed');
    expect(receiver.at(hook.path)).toHaveLength(3);
    expect((await queue.getJob(retried))!.priority).toBe(1);
    await waitFor('nothing pending', async () => (await pendingOf(queue, workspaceId)).length === 0);
  });

  test("a delivery that fails for good leaves its workspace's pending ones", async () => {
    const { queue } = harness({ schedule: [20] });
    const c = serviceClient('events', app, testIdentity());
    const endpoint = await createEndpoint(c, hookPath(500).url);
    const job = deliveryJobId((await writeEvent(c.identity.workspaceId)).id, endpoint.id);
    await waitFor('the job to fail for good', async () => (await queue.getJobState(job)) === 'failed');
    await waitFor('nothing pending', async () => (await pendingOf(queue, c.identity.workspaceId)).length === 0);
  });

  test("ranks are per workspace and a job added again under its id counts once (a relay's re-enqueue, a requeue, an add that failed after its rank)", async () => {
    const { queue } = harness({ relay: false, worker: false });
    const [a, b] = [randomUUID(), randomUUID()];
    const batch = [jobOf(a), jobOf(b), jobOf(a), jobOf(a), jobOf(b)];
    const ids = batch.map((job) => job.opts.jobId);
    await queue.addBulk(batch);
    expect(await priorities(queue, ids)).toEqual([1, 1, 2, 3, 2]);

    await queue.addBulk(batch);
    await queue.add(batch[2]!.name, batch[2]!.data, batch[2]!.opts);
    expect(await priorities(queue, ids)).toEqual([1, 1, 2, 3, 2]);
    expect(await pendingOf(queue, a)).toHaveLength(3);
    expect(await pendingOf(queue, b)).toHaveLength(2);

    // Ranked, then the add failed (Redis went away): the same job added later keeps that one entry.
    const lost = jobOf(a);
    expect((await queue.prioritized([lost]))[0]!.opts.priority).toBe(4);
    await queue.add(lost.name, lost.data, lost.opts);
    expect((await queue.getJob(lost.opts.jobId))!.priority).toBe(4);
    expect(await pendingOf(queue, a)).toHaveLength(4);
  });

  test('healing: entries of jobs that ended unseen, that are not in the queue past the grace, or older than the horizon stop counting', async () => {
    const { prefix, queue } = harness({ relay: false, worker: false });
    const workspaceId = randomUUID();
    const key = pendingKey(queue.qualifiedName, workspaceId);

    // A job waiting for its retry whose entry is older than the horizon (its worker died a horizon ago).
    const old = jobOf(workspaceId);
    await queue.add(old.name, old.data, { ...old.opts, delay: 3_600_000 });
    // A job that completed while its worker never removed its entry (it died in between).
    const unseen = jobOf(workspaceId);
    await queue.add(unseen.name, unseen.data, unseen.opts);
    const plain = new Worker(queue.name, async () => undefined, { connection: { url: testRedisUrl() }, prefix: queueKeyPrefix(prefix, queue.name) });
    try {
      await waitFor('the job to complete', async () => (await queue.getJobState(unseen.opts.jobId)) === 'completed');
    } finally {
      await plain.close();
    }
    const now = await redisNow();
    await redis.zadd(key, now - queue.pendingHorizonMs - 1000, old.opts.jobId);
    // No job: one whose add failed two minutes ago, and one whose add is on its way (a second ago).
    await redis.zadd(key, now - 120_000, 'gone', now - 1000, 'on-its-way');
    expect(await redis.zcard(key)).toBe(4);

    const next = jobOf(workspaceId);
    await queue.add(next.name, next.data, next.opts);
    expect(await pendingOf(queue, workspaceId)).toEqual(['on-its-way', next.opts.jobId]);
    expect((await queue.getJob(next.opts.jobId))!.priority).toBe(2);
    // The set outlives its newest entry by one horizon, and no longer.
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(queue.pendingHorizonMs - 60_000);
    expect(ttl).toBeLessThanOrEqual(queue.pendingHorizonMs);
  });
});

describe('on a Redis Cluster (contract section 17: every script in one hash slot)', () => {
  test("the pending sets sit in their queue's slot; ranks, removal and healing run there", async () => {
    const cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    cleanups.push(() => cluster.stop());
    const target: RedisTarget = { topology: { kind: 'cluster', nodes: cluster.nodes } };
    const producer = createRedisConnection(target, { name: 'fairness-test-queue', role: 'producer' });
    const consumer = createRedisConnection(target, { name: 'fairness-test-worker', role: 'worker' });
    const reader = createRedisConnection(target, { name: 'fairness-test-reader', role: 'worker' });
    cleanups.push(() => Promise.all([producer, consumer, reader].map(closeRedisConnection)));
    const prefix = uniqueName('webhooks-cluster-test');
    const queueName = 'webhooks-test';
    const queue = createDeliveryQueue(queueName, producer, { prefix });
    cleanups.push(() => queue.close());
    const worker = startDeliveryWorker({ sql, connection: consumer, queueName, prefix, schedule: [30], timeoutMs: 2000, allowPrivate: true });
    cleanups.push(() => worker.close());
    const relay = startOutboxRelay({ sql, queue, pollIntervalMs: 20 });
    cleanups.push(() => relay.close());
    await waitFor('the cluster connections to be ready', () => [producer, consumer].every((c) => c.status === 'ready'));

    const sides = [serviceClient('events', app, testIdentity()), serviceClient('events', app, testIdentity())];
    const hooks = [hookPath(200), hookPath(200)];
    const endpoints = [await createEndpoint(sides[0]!, hooks[0]!.url), await createEndpoint(sides[1]!, hooks[1]!.url)];
    const events = [
      await recordOutboxEvents(
        sql,
        [0, 1, 2].map((n) => ({ type: 'item.created' as const, workspaceId: sides[0]!.identity.workspaceId, data: { n } })),
      ),
      await recordOutboxEvents(sql, [{ type: 'item.created', workspaceId: sides[1]!.identity.workspaceId, data: { n: 0 } }]),
    ];
    await waitFor('every delivery', () => receiver.at(hooks[0]!.path).length === 3 && receiver.at(hooks[1]!.path).length === 1);
    await waitFor('every job to end', () =>
      jobsDone(
        queue,
        endpoints.map((e) => e.id),
      ),
    );
    const ranks = async (side: number) =>
      (await Promise.all(events[side]!.map(async (e) => (await queue.getJob(deliveryJobId(e.id, endpoints[side]!.id)))?.priority))).sort();
    expect(await ranks(0)).toEqual([1, 2, 3]);
    expect(await ranks(1)).toEqual([1]);

    for (const side of sides) {
      const key = pendingKey(queue.qualifiedName, side.identity.workspaceId);
      expect(await cluster.masterOfKey(key)).toEqual(await cluster.masterOfKey(queue.toKey('prioritized')));
      await waitFor('nothing pending', async () => (await reader.zcard(key)) === 0);
    }
    // A later add of the workspace checks its oldest entries against the queue's jobs, on the cluster
    // too: an entry without a job, two minutes old (the nodes run on this machine's clock), goes.
    const key = pendingKey(queue.qualifiedName, sides[0]!.identity.workspaceId);
    await reader.zadd(key, Date.now() - 120_000, 'gone');
    await recordOutboxEvents(sql, [{ type: 'item.created', workspaceId: sides[0]!.identity.workspaceId, data: { n: 3 } }]);
    await waitFor('the later delivery', () => receiver.at(hooks[0]!.path).length === 4);
    await waitFor('nothing pending', async () => (await reader.zcard(key)) === 0);
  });
});
