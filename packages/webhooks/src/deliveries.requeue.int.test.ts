import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, createMetricsRegistry, type Logger, type Registry } from '@platform/core';
import {
  deleteRedisKeys,
  metricSample,
  serviceClient,
  startReceiver,
  testIdentity,
  testRedisUrl,
  uniqueName,
  waitFor,
  type Received,
  type Receiver,
} from '@platform/testing';
import { TEST_WEBHOOKS_CONFIG, type WebhooksConfig } from './config';
import { createDeliveryQueue, deliveryJobId, type DeliveryQueue } from './deliveries.queue';
import { requeueLostDeliveries, type RequeuePass } from './deliveries.requeue';
import { recordOutboxEvents, type OutboxEvent } from './outbox';
import { publishOutboxBatch } from './outbox-relay';
import { startServiceWebhooks, type ServiceWebhooks } from './runtime';
import type { Sql } from './sql';
import { freshTestDatabase, testApp } from './test/app';
import { verifyWebhook, type WebhookSecret } from './webhook-signature';

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
  /**
   * A workspace with `count` endpoints subscribed to every event, each on a path of its own at `target`
   * (default: the shared receiver, answering 200), and a client of the workspace's API.
   */
  workspace(
    count: number,
    target?: { url(path: string): string },
  ): Promise<{ workspaceId: string; endpoints: { id: string; secret: WebhookSecret; path: string }[]; client: ReturnType<typeof serviceClient> }>;
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
    async workspace(count, target = receiver) {
      const c = serviceClient('events', app, testIdentity());
      const endpoints = [];
      for (let i = 0; i < count; i++) {
        const path = `/hooks/${randomUUID()}`;
        if (target === receiver) receiver.answer(path, 200);
        const { body } = await c.post('/webhook-endpoints', { url: target.url(path), events: ['*'] }).expect(201);
        endpoints.push({ id: body.id as string, secret: body.secret as WebhookSecret, path });
      }
      return { workspaceId: c.identity.workspaceId, endpoints, client: c };
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
      expect(verifyWebhook(r.body, r.headers, endpoint.secret)).toEqual({
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
  // Added as the relay adds: ranked first among its workspace's pending deliveries, whatever the busy one's backlog.
  expect((await p.queue.getJob(lostJob))?.priority).toBe(1);
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

// The retries (contract section 11) wait in Redis as delayed jobs, for up to 10 h: a failover can
// lose one after its attempt was recorded. The requeue finds the pair whose latest record is a failed
// attempt with steps left, overdue, without a job, and adds the job back carrying the attempts made.

/**
 * A receiver on which the first request to each of `paths` waits until all of them have come, then
 * the queue is paused and each is answered 500: the retries that follow stay in Redis untaken (delayed,
 * then paused) for the test to delete, as a failover would. Later requests get `later`, in order, the
 * last one repeating.
 */
async function startLosingReceiver(queue: DeliveryQueue, paths: string[], ...later: number[]) {
  const received: Received[] = [];
  const firsts: (() => void)[] = [];
  let answered = false;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const first = received.every((r) => r.path !== path);
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (!first) {
        const status = later.length > 1 ? later.shift()! : (later[0] ?? 200);
        res.writeHead(status).end();
        return;
      }
      firsts.push(() => res.writeHead(500).end());
      if (firsts.length < paths.length) return;
      void queue.pause().then(() => {
        firsts.forEach((answer) => answer());
        answered = true;
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    url: (path: string) => `${base}${path}`,
    at: (path: string) => received.filter((r) => r.path === path),
    /** Resolves once every first attempt was answered with the queue paused. */
    paused: () => waitFor('the first attempts, with the queue paused', () => answered, 60_000),
  };
}

interface Attempt {
  attempt: number;
  status: string;
  response_status: number | null;
  created_at: Date;
}

async function attempts(sql: Sql, endpointId: string): Promise<Attempt[]> {
  return sql.$queryRawUnsafe<Attempt[]>(
    `SELECT "attempt", "status", "response_status", "created_at" FROM "webhook_deliveries" WHERE "endpoint_id" = $1::uuid ORDER BY "created_at", "attempt"`,
    endpointId,
  );
}

/** Waits until the failed first attempt of each job is recorded and its retry waits in Redis, then deletes the retries, as a failover would. */
async function loseTheRetries(p: Platform, jobs: { jobId: string; endpointId: string }[]): Promise<void> {
  for (const { jobId, endpointId } of jobs) {
    await waitFor(
      'the failed first attempt, its retry waiting',
      async () => {
        const state = await p.queue.getJobState(jobId);
        return (await attempts(p.sql, endpointId)).length === 1 && state !== 'active' && state !== 'unknown';
      },
      60_000,
    );
    await p.queue.remove(jobId);
    expect(await p.queue.getJob(jobId)).toBeUndefined();
  }
}

test('a retry Redis lost after a failed attempt is added again once overdue: same webhook-id, attempt 2, and the schedule goes on from its 2nd step', async () => {
  const p = await platform('webhooks_requeue_retry');
  const path = `/hooks/${randomUUID()}`;
  // Attempt 1 fails (its retry is lost), the requeued attempt 2 fails, attempt 3 succeeds.
  const losing = await startLosingReceiver(p.queue, [path], 500, 200);
  const { workspaceId, endpoints } = await p.workspace(1, { url: () => losing.url(path) });
  const endpoint = endpoints[0]!;
  // The 2nd step is long: attempt 3 waiting for the 1st step would show that the schedule restarted.
  const runtime = p.start({ WEBHOOKS_RETRY_SCHEDULE_MS: [300, 2000, 300] });
  const [event] = await p.writeEvents(workspaceId, 1);
  const jobId = deliveryJobId(event!.id, endpoint.id);
  await losing.paused();
  await loseTheRetries(p, [{ jobId, endpointId: endpoint.id }]);
  await p.queue.resume();

  await waitFor('the delivery', () => losing.at(path).length === 3, 60_000);
  await waitFor('the job to complete', async () => (await p.queue.getJobState(jobId)) === 'completed', 60_000);
  const got = losing.at(path);
  for (const r of got) expect(verifyWebhook(r.body, r.headers, endpoint.secret).id).toBe(event!.id);
  const records = await attempts(p.sql, endpoint.id);
  expect(records.map((r) => [r.attempt, r.status, r.response_status])).toEqual([
    [1, 'failed', 500],
    [2, 'failed', 500],
    [3, 'succeeded', 200],
  ]);
  // The requeued job failed attempt 2: BullMQ's own retry waited the schedule's 2nd step, not its 1st.
  expect(records[2]!.created_at.getTime() - records[1]!.created_at.getTime()).toBeGreaterThanOrEqual(2000);
  expect((await p.queue.getJob(jobId))!.data.attempts_made).toBe(1);
  expect(await runtime.requeued()).toBe(1);
}, 120_000);

test('a pair whose last attempt was the final one of the schedule is not added again, nor one whose endpoint was disabled since; a lost retry beside them is', async () => {
  const p = await platform('webhooks_requeue_retry_ended');
  const runtime = p.start({ WEBHOOKS_RETRY_SCHEDULE_MS: [100, 100] });

  // Every attempt failed, the last one of the schedule; the failed job is then gone from Redis.
  const ended = await p.workspace(1);
  receiver.answer(ended.endpoints[0]!.path, 500);
  const [endedEvent] = await p.writeEvents(ended.workspaceId, 1);
  const endedJob = deliveryJobId(endedEvent!.id, ended.endpoints[0]!.id);
  await waitFor('the job to fail after its last attempt', async () => (await p.queue.getJobState(endedJob)) === 'failed', 60_000);
  expect((await attempts(p.sql, ended.endpoints[0]!.id)).map((r) => [r.attempt, r.status])).toEqual([
    [1, 'failed'],
    [2, 'failed'],
    [3, 'failed'],
  ]);
  await p.queue.remove(endedJob);

  // Two endpoints fail their first attempt and lose their retry; one of them is then disabled.
  const paths = [`/hooks/${randomUUID()}`, `/hooks/${randomUUID()}`];
  const losing = await startLosingReceiver(p.queue, paths, 200);
  let n = 0;
  const lost = await p.workspace(2, { url: () => losing.url(paths[n++]!) });
  const [disabled, kept] = lost.endpoints as [(typeof lost.endpoints)[0], (typeof lost.endpoints)[0]];
  const [lostEvent] = await p.writeEvents(lost.workspaceId, 1);
  await losing.paused();
  await loseTheRetries(
    p,
    [disabled, kept].map((e) => ({ jobId: deliveryJobId(lostEvent!.id, e.id), endpointId: e.id })),
  );
  await lost.client.patch(`/webhook-endpoints/${disabled.id}`, { enabled: false }).expect(200);
  await p.queue.resume();

  // The pass that adds the kept endpoint's retry reads the other's too (due at the same time).
  await waitFor("the kept endpoint's retry", () => losing.at(paths[1]!).length === 2, 60_000);
  await aWholePassOfEach([runtime]);
  expect(await p.queue.getJob(endedJob)).toBeUndefined();
  expect(await p.queue.getJob(deliveryJobId(lostEvent!.id, disabled.id))).toBeUndefined();
  expect(receiver.at(ended.endpoints[0]!.path)).toHaveLength(3);
  expect(losing.at(paths[0]!)).toHaveLength(1);
  expect((await attempts(p.sql, kept.id)).map((r) => [r.attempt, r.status])).toEqual([
    [1, 'failed'],
    [2, 'succeeded'],
  ]);
  expect(await runtime.requeued()).toBe(1);
}, 120_000);

test("one workspace's lost retries do not hold up another's: the workspaces take turns in a pass, and each job carries its attempts", async () => {
  const p = await platform('webhooks_requeue_retry_turns');
  const busy = await p.workspace(1);
  const other = await p.workspace(1);
  const backlog = await p.writeEvents(busy.workspaceId, 30);
  const [lone] = await p.writeEvents(other.workspaceId, 1);
  // Published while no instance runs, every job lost after a failed 2nd attempt recorded 5 s ago
  // (the busy workspace's first).
  await p.sql.$transaction((tx) => publishOutboxBatch(tx, p.queue, 100));
  await p.queue.obliterate({ force: true });
  for (const [event, endpoint, ago] of [...backlog.map((e) => [e, busy.endpoints[0]!, 6] as const), [lone!, other.endpoints[0]!, 5] as const]) {
    await p.sql.$executeRawUnsafe(
      `INSERT INTO "webhook_deliveries" ("workspace_id", "endpoint_id", "event_id", "event_type", "attempt", "status", "response_status", "error", "created_at")
       VALUES ($1::uuid, $2::uuid, $3::text, 'item.created', 2, 'failed', 500, 'receiver answered 500', CURRENT_TIMESTAMP - $4::int * interval '1 second')`,
      event.workspaceId,
      endpoint.id,
      event.id,
      ago,
    );
  }

  const options = { sql: p.sql, queue: p.queue, afterMs: 200, lookbackMs: 900_000, schedule: [100, 1000, 100], batch: 5 };
  const pass = await requeueLostDeliveries(options);
  expect(pass).toMatchObject({ ran: true, examined: 0, retriesExamined: 5, retriesRequeued: 5 });
  const loneJob = await p.queue.getJob(deliveryJobId(lone!.id, other.endpoints[0]!.id));
  expect(loneJob?.data).toMatchObject({ endpoint_id: other.endpoints[0]!.id, attempts_made: 2, event: { id: lone!.id } });
  // Ranked as the relay's jobs are: its workspace's only pending delivery goes first, as the busy one's first does.
  expect(loneJob?.priority).toBe(1);
  // Until a worker attempts them, the same pairs are looked at again, and found in the queue.
  expect(await requeueLostDeliveries(options)).toMatchObject({ retriesExamined: 5, retriesRequeued: 0 });
}, 120_000);
