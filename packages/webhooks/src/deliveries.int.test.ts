import { randomUUID } from 'node:crypto';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { createLogger, type EventType } from '@platform/core';
import { redisKeys, serviceClient, testIdentity, testRedisUrl, uniqueName, type ServiceClient } from '@platform/testing';
import { createDeliveryQueue, DELIVERY_JOB_NAME, deliveryJobId, deliveryJobOptions, type DeliveryJob, type DeliveryQueue } from './deliveries.queue';
import { recordOutboxEvents } from './outbox';
import { publishOutboxBatch, startOutboxRelay } from './outbox-relay';
import { testApp, testSql } from './test/app';
import { closedAfterEach, createEndpoint, deliveryHarness, hookPath as hookPathOf, jobsDone, pendingOf, type DeliveryHarnessOptions } from './test/deliveries';
import { startReceiver, waitFor, type Answer, type Receiver } from '@platform/testing';
import { verifyWebhook, WebhookVerificationError, type WebhookSecret } from './webhook-signature';

const { pool, sql } = testSql();
const app = testApp(sql, { allowPrivate: true });
const redis = new Redis(testRedisUrl());
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await pool.end();
  redis.disconnect();
});

const cleanups = closedAfterEach();

const harness = (options?: DeliveryHarnessOptions) => deliveryHarness(sql, cleanups, options);
const hookPath = (...answers: Answer[]) => hookPathOf(receiver, ...answers);

/** What a service does in its transaction: write the outbox row. */
async function writeEvent(workspaceId: string, type: EventType = 'ticket.validated', data: object = ticket()) {
  const [event] = await recordOutboxEvents(sql, [{ type, workspaceId, data }]);
  return event!;
}

function ticket() {
  return {
    id: randomUUID(),
    event_id: randomUUID(),
    status: 'validated',
    holder_name: 'Ada',
    metadata: {},
    validated_at: '2024-12-01T09:30:00.000Z',
    validator_id: null,
    gate: 'north',
    created_at: '2024-12-01T09:00:00.000Z',
  };
}

async function deliveries(c: ServiceClient, endpointId: string) {
  return (await c.get(`/webhook-endpoints/${endpointId}/deliveries?limit=100`).expect(200)).body.data as {
    attempt: number;
    status: string;
    response_status: number | null;
    error: string | null;
    event_id: string;
    event_type: string;
  }[];
}

async function isPublished(eventId: string): Promise<boolean> {
  const rows = await sql.$queryRawUnsafe<{ published: boolean }[]>(
    `SELECT "published_at" IS NOT NULL AS "published" FROM "outbox_events" WHERE "id" = $1::text`,
    eventId,
  );
  return rows[0]?.published === true;
}

/** True when another transaction can lock the outbox row right now (NOWAIT). */
async function lockable(eventId: string): Promise<boolean> {
  return sql
    .$transaction(async (tx) => {
      await tx.$queryRawUnsafe(`SELECT 1 FROM "outbox_events" WHERE "id" = $1::text FOR UPDATE NOWAIT`, eventId);
      return true;
    })
    .catch(() => false);
}

describe('delivery', () => {
  test('an event written to the outbox arrives at the receiver, signed, verifiable with verifyWebhook, and is recorded', async () => {
    harness();
    const c = serviceClient('events', app, testIdentity());
    const hook = hookPath(200);
    const endpoint = await createEndpoint(c, hook.url, ['ticket.validated']);
    const data = ticket();
    const event = await writeEvent(c.identity.workspaceId, 'ticket.validated', data);

    const [got] = await waitFor('the delivery', () => receiver.at(hook.path).length === 1 && receiver.at(hook.path));
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['webhook-id']).toBe(event.id);
    expect(Math.abs(Number(got!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    expect(got!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const verified = verifyWebhook(got!.body, got!.headers, endpoint.secret);
    expect(verified).toEqual({ id: event.id, type: 'ticket.validated', created_at: event.createdAt.toISOString(), workspace_id: c.identity.workspaceId, data });
    expect(event.id).toMatch(/^evt_[0-9A-Z]{26}$/);

    const records = await waitFor('the delivery record', async () => {
      const list = await deliveries(c, endpoint.id);
      return list.length === 1 && list;
    });
    expect(records).toEqual([
      {
        id: expect.any(String),
        event_id: event.id,
        event_type: 'ticket.validated',
        attempt: 1,
        status: 'succeeded',
        response_status: 200,
        error: null,
        created_at: expect.any(String),
      },
    ]);
    expect(await isPublished(event.id)).toBe(true);
  });

  test('only enabled endpoints of the same workspace subscribed to the type (or "*") get the event', async () => {
    const { queue } = harness();
    const c = serviceClient('events', app, testIdentity());
    const stranger = serviceClient('events', app, testIdentity());
    const wildcard = hookPath();
    const subscribed = hookPath();
    const otherTypes = hookPath();
    const disabled = hookPath();
    const otherWorkspace = hookPath();
    await createEndpoint(c, wildcard.url, ['*']);
    await createEndpoint(c, subscribed.url, ['item.created', 'ticket.validated']);
    const other = await createEndpoint(c, otherTypes.url, ['item.created', 'run.failed']);
    const off = await createEndpoint(c, disabled.url, ['*']);
    await c.patch(`/webhook-endpoints/${off.id}`, { enabled: false }).expect(200);
    const foreign = await createEndpoint(stranger, otherWorkspace.url, ['*']);

    const event = await writeEvent(c.identity.workspaceId, 'ticket.validated');
    await waitFor('both subscribed endpoints', () => receiver.at(wildcard.path).length === 1 && receiver.at(subscribed.path).length === 1);
    // The event's jobs were added in one go when it was published: none for the other endpoints.
    for (const id of [other.id, off.id, foreign.id]) expect(await queue.getJobState(deliveryJobId(event.id, id))).toBe('unknown');
    expect(receiver.at(otherTypes.path)).toHaveLength(0);
    expect(receiver.at(disabled.path)).toHaveLength(0);
    expect(receiver.at(otherWorkspace.path)).toHaveLength(0);
    expect(await deliveries(c, other.id)).toEqual([]);
    expect(receiver.at(wildcard.path)[0]!.headers['webhook-id']).toBe(event.id);
  });

  test('a receiver that fails twice then succeeds gets the event on the third attempt, with the same webhook-id and 3 records', async () => {
    const { queue } = harness({ schedule: [100, 100, 100] });
    const c = serviceClient('events', app, testIdentity());
    const hook = hookPath(500, 503, 200);
    const endpoint = await createEndpoint(c, hook.url);
    const event = await writeEvent(c.identity.workspaceId);

    const seen = await waitFor('three attempts', () => receiver.at(hook.path).length === 3 && receiver.at(hook.path));
    expect(seen.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id, event.id]);
    for (const attempt of seen) expect(verifyWebhook(attempt.body, attempt.headers, endpoint.secret).id).toBe(event.id);
    const records = await waitFor('three records', async () => {
      const list = await deliveries(c, endpoint.id);
      return list.length === 3 && list;
    });
    expect(records.map((r) => [r.attempt, r.status, r.response_status, r.error])).toEqual([
      [1, 'failed', 500, 'receiver answered 500'],
      [2, 'failed', 503, 'receiver answered 503'],
      [3, 'succeeded', 200, null],
    ]);
    // Its job is done: nothing more can be sent.
    await waitFor('the job to complete', async () => (await queue.getJobState(deliveryJobId(event.id, endpoint.id))) === 'completed');
    expect(receiver.at(hook.path)).toHaveLength(3);
  });

  test('retries follow the schedule and stop after its last step', async () => {
    const { queue } = harness({ schedule: [40, 250] });
    const c = serviceClient('events', app, testIdentity());
    const hook = hookPath(500);
    const endpoint = await createEndpoint(c, hook.url);
    const event = await writeEvent(c.identity.workspaceId);
    const times: number[] = [];
    await waitFor('three attempts', () => {
      while (times.length < receiver.at(hook.path).length) times.push(Date.now());
      return receiver.at(hook.path).length === 3;
    });
    // The third attempt waited for the second step (250 ms), longer than the first (40 ms).
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(200);
    // Failed for good: no attempt can follow.
    await waitFor('the job to fail for good', async () => (await queue.getJobState(deliveryJobId(event.id, endpoint.id))) === 'failed');
    expect(receiver.at(hook.path)).toHaveLength(3);
    expect((await deliveries(c, endpoint.id)).map((r) => [r.attempt, r.status])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
      [3, 'failed'],
    ]);
  });

  test('410 Gone disables the endpoint: no retry, no later events', async () => {
    const { queue } = harness({ schedule: [20, 20, 20] });
    const c = serviceClient('events', app, testIdentity());
    const hook = hookPath(410);
    const endpoint = await createEndpoint(c, hook.url);
    await writeEvent(c.identity.workspaceId);
    await waitFor('the endpoint to be disabled', async () => (await c.get(`/webhook-endpoints/${endpoint.id}`)).body.enabled === false);
    expect((await deliveries(c, endpoint.id)).map((r) => [r.attempt, r.status, r.response_status])).toEqual([[1, 'failed', 410]]);

    const later = await writeEvent(c.identity.workspaceId);
    await waitFor('the later event to be published', () => isPublished(later.id));
    // Published without a delivery job for the disabled endpoint: nothing can reach it.
    expect(await queue.getJobState(deliveryJobId(later.id, endpoint.id))).toBe('unknown');
    expect(receiver.at(hook.path)).toHaveLength(1);
    // Enabling it again is the way back.
    receiver.answer(hook.path, 200);
    await c.patch(`/webhook-endpoints/${endpoint.id}`, { enabled: true }).expect(200);
    await writeEvent(c.identity.workspaceId);
    await waitFor('delivery after re-enabling', () => receiver.at(hook.path).length === 2);
  });

  test('a receiver slower than the timeout is a failed attempt without a response status', async () => {
    harness({ schedule: [], timeoutMs: 200 });
    const c = serviceClient('events', app, testIdentity());
    const hook = hookPath('hang');
    const endpoint = await createEndpoint(c, hook.url);
    await writeEvent(c.identity.workspaceId);
    const records = await waitFor('the record', async () => {
      const list = await deliveries(c, endpoint.id);
      return list.length === 1 && list;
    });
    expect(records[0]).toMatchObject({ attempt: 1, status: 'failed', response_status: null, error: 'timed out after 200 ms' });
  });

  test("a failed attempt is recorded in the platform's words: no address, port or driver text reaches the tenant", async () => {
    harness({ schedule: [] });
    const c = serviceClient('events', app, testIdentity());
    // Nothing listens on port 1: the connection is refused.
    const endpoint = await createEndpoint(c, 'http://localhost:1/hook');
    await writeEvent(c.identity.workspaceId);
    const records = await waitFor('the record', async () => {
      const list = await deliveries(c, endpoint.id);
      return list.length === 1 && list;
    });
    expect(records[0]).toMatchObject({ status: 'failed', response_status: null, error: 'connection refused' });
  });

  test('redirects are not followed: a 3xx is a failed attempt', async () => {
    harness({ schedule: [] });
    const c = serviceClient('events', app, testIdentity());
    const target = hookPath(200);
    const hook = hookPath({ redirect: target.url });
    const endpoint = await createEndpoint(c, hook.url);
    await writeEvent(c.identity.workspaceId);
    const records = await waitFor('the record', async () => {
      const list = await deliveries(c, endpoint.id);
      return list.length === 1 && list;
    });
    expect(records[0]).toMatchObject({ status: 'failed', response_status: 302 });
    expect(receiver.at(target.path)).toHaveLength(0);
  });

  test('the SSRF guard runs again at delivery time: a private target saved earlier is not contacted', async () => {
    // The endpoint was accepted (say, DNS said public then); the worker refuses private targets.
    harness({ schedule: [], allowPrivate: false });
    const c = serviceClient('events', app, testIdentity());
    const literal = hookPath(200);
    const named = hookPath(200);
    const byIp = await createEndpoint(c, literal.url);
    const byName = await createEndpoint(c, named.url.replace('127.0.0.1', 'localhost'));
    await writeEvent(c.identity.workspaceId);
    for (const endpoint of [byIp, byName]) {
      const records = await waitFor('the refused attempt', async () => {
        const list = await deliveries(c, endpoint.id);
        return list.length === 1 && list;
      });
      expect(records[0]).toMatchObject({ status: 'failed', response_status: null, error: 'must be a public address' });
    }
    expect(receiver.at(literal.path)).toHaveLength(0);
    expect(receiver.at(named.path)).toHaveLength(0);
  });

  test('during a secret rotation both signatures are sent and each secret verifies; after 24 h only the new one', async () => {
    harness();
    const c = serviceClient('events', app, testIdentity());
    const hook = hookPath(200);
    const endpoint = await createEndpoint(c, hook.url);
    const rotated = (await c.post(`/webhook-endpoints/${endpoint.id}/rotate-secret`).expect(200)).body as { secret: WebhookSecret };
    await writeEvent(c.identity.workspaceId);
    const [during] = await waitFor('the delivery', () => receiver.at(hook.path).length === 1 && receiver.at(hook.path));
    const signatures = String(during!.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    expect(verifyWebhook(during!.body, during!.headers, rotated.secret).type).toBe('ticket.validated');
    expect(verifyWebhook(during!.body, during!.headers, endpoint.secret).type).toBe('ticket.validated');
    // Each signature belongs to one secret: the new one first.
    expect(() => verifyWebhook(during!.body, { ...during!.headers, 'webhook-signature': signatures[0] }, endpoint.secret)).toThrow(WebhookVerificationError);
    expect(verifyWebhook(during!.body, { ...during!.headers, 'webhook-signature': signatures[1] }, endpoint.secret)).toBeTruthy();

    await sql.$executeRawUnsafe(`UPDATE "webhook_endpoints" SET "previous_secret_expires_at" = now() - interval '1 second' WHERE "id" = $1::uuid`, endpoint.id);
    await writeEvent(c.identity.workspaceId);
    const after = (await waitFor('the second delivery', () => receiver.at(hook.path).length === 2 && receiver.at(hook.path)))[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifyWebhook(after.body, after.headers, rotated.secret).type).toBe('ticket.validated');
    expect(() => verifyWebhook(after.body, after.headers, endpoint.secret)).toThrow(WebhookVerificationError);
  });
});

describe('deliveries that cannot be made', () => {
  /** The job as the relay would have enqueued it, added straight to the queue. */
  async function enqueue(queue: DeliveryQueue, workspaceId: string, endpointId: string): Promise<string> {
    const event = await writeEvent(workspaceId);
    await sql.$executeRawUnsafe(`UPDATE "outbox_events" SET "published_at" = now() WHERE "id" = $1::text`, event.id);
    const data: DeliveryJob = {
      endpoint_id: endpointId,
      event: { id: event.id, type: 'ticket.validated', created_at: event.createdAt.toISOString(), workspace_id: workspaceId, data: ticket() },
    };
    await queue.add(DELIVERY_JOB_NAME, data, deliveryJobOptions(event.id, endpointId));
    return deliveryJobId(event.id, endpointId);
  }

  async function finalState(queue: DeliveryQueue, jobId: string): Promise<{ state: string; reason: string | undefined }> {
    const state = await waitFor(`job ${jobId} to end`, async () => {
      const current = await queue.getJobState(jobId);
      return (current === 'failed' || current === 'completed') && current;
    });
    return { state, reason: (await queue.getJob(jobId))?.failedReason };
  }

  test('a job whose endpoint this database does not know (deleted, or of another platform) fails with its reason, logged and counted: never completed', async () => {
    const logger = createLogger('webhooks-test', 'silent');
    const warn = jest.spyOn(logger, 'warn');
    const { queue, undeliverable } = harness({ relay: false, logger });
    const c = serviceClient('events', app, testIdentity());
    const hook = hookPath(200);
    const deleted = await createEndpoint(c, hook.url);
    await c.delete(`/webhook-endpoints/${deleted.id}`).expect(204);
    const elsewhere = randomUUID();

    for (const endpointId of [deleted.id, elsewhere]) {
      const jobId = await enqueue(queue, c.identity.workspaceId, endpointId);
      expect(await finalState(queue, jobId)).toEqual({ state: 'failed', reason: 'undeliverable: unknown_endpoint' });
      expect(warn).toHaveBeenLastCalledWith(
        expect.objectContaining({ job_id: jobId, reason: 'unknown_endpoint', endpoint_id: endpointId, workspace_id: c.identity.workspaceId }),
        'webhook delivery cannot be made',
      );
    }
    expect(undeliverable).toEqual(['unknown_endpoint', 'unknown_endpoint']);
    expect(receiver.at(hook.path)).toHaveLength(0);
    // Ended for good: neither counts among its workspace's pending deliveries any more.
    await waitFor('the jobs to leave the pending ones', async () => (await pendingOf(redis, queue, c.identity.workspaceId)).length === 0);
  });

  test('a job for an endpoint disabled since it was enqueued is not sent: a failed delivery record says so and the job fails with its reason', async () => {
    const { queue, undeliverable } = harness({ relay: false });
    const c = serviceClient('events', app, testIdentity());
    const hook = hookPath(200);
    const endpoint = await createEndpoint(c, hook.url);
    await c.patch(`/webhook-endpoints/${endpoint.id}`, { enabled: false }).expect(200);

    const jobId = await enqueue(queue, c.identity.workspaceId, endpoint.id);
    expect(await finalState(queue, jobId)).toEqual({ state: 'failed', reason: 'undeliverable: endpoint_disabled' });
    expect((await deliveries(c, endpoint.id)).map((r) => [r.attempt, r.status, r.response_status, r.error])).toEqual([
      [1, 'failed', null, 'not sent: the endpoint is disabled'],
    ]);
    expect(undeliverable).toEqual(['endpoint_disabled']);
    expect(receiver.at(hook.path)).toHaveLength(0);
  });

  test('a malformed job fails at once as invalid_job, without retries', async () => {
    const { queue, undeliverable } = harness({ relay: false });
    await queue.add(DELIVERY_JOB_NAME, { endpoint_id: 'not-a-uuid' } as unknown as DeliveryJob, { jobId: 'malformed', attempts: 5 });
    const { state, reason } = await finalState(queue, 'malformed');
    expect(state).toBe('failed');
    expect(reason).toMatch(/^undeliverable: invalid_job: /);
    expect((await queue.getJob('malformed'))!.attemptsMade).toBe(1);
    expect(undeliverable).toEqual(['invalid_job']);
  });

  test('a harness leaves no key of its prefix in Redis once closed', async () => {
    const { prefix, queue } = harness();
    await enqueue(queue, randomUUID(), randomUUID());
    expect((await redisKeys(prefix, testRedisUrl())).length).toBeGreaterThan(0);
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    expect(await redisKeys(prefix, testRedisUrl())).toEqual([]);
  });
});

describe('outbox relay', () => {
  test("one batch holding two workspaces' events: each workspace's \"*\" endpoint gets its own workspace's events and no other", async () => {
    const { queue } = harness({ relay: false });
    const a = serviceClient('events', app, testIdentity());
    const b = serviceClient('events', app, testIdentity());
    const hooks = { a: hookPath(200), b: hookPath(200) };
    const endpoints = { a: (await createEndpoint(a, hooks.a.url, ['*'])).id, b: (await createEndpoint(b, hooks.b.url, ['*'])).id };
    // Interleaved in the outbox, so the batch mixes them.
    const events = { a: [] as string[], b: [] as string[] };
    for (let i = 0; i < 3; i++) {
      events.a.push((await writeEvent(a.identity.workspaceId, 'item.created', { id: randomUUID() })).id);
      events.b.push((await writeEvent(b.identity.workspaceId, 'item.created', { id: randomUUID() })).id);
    }

    const published = await sql.$transaction((tx) => publishOutboxBatch(tx, queue, 100));
    expect(published.events).toBeGreaterThanOrEqual(6);
    for (const id of [...events.a, ...events.b]) expect(await isPublished(id)).toBe(true);

    // The jobs of that one batch: each endpoint has exactly its workspace's events.
    const jobs = (await queue.getJobs(['completed', 'failed', 'active', 'waiting', 'prioritized', 'delayed'])).map((job) => job.data);
    const eventsOf = (endpointId: string) =>
      jobs
        .filter((job) => job.endpoint_id === endpointId)
        .map((job) => job.event.id)
        .sort();
    expect(eventsOf(endpoints.a)).toEqual([...events.a].sort());
    expect(eventsOf(endpoints.b)).toEqual([...events.b].sort());

    await waitFor("both endpoints' events", () => receiver.at(hooks.a.path).length >= 3 && receiver.at(hooks.b.path).length >= 3);
    // Every job of the batch done: whatever it would deliver has arrived.
    await waitFor('every job of the batch to complete', () => jobsDone(queue, Object.values(endpoints)));
    for (const [side, client] of [
      ['a', a],
      ['b', b],
    ] as const) {
      const got = receiver.at(hooks[side].path);
      expect(got.map((r) => r.headers['webhook-id']).sort()).toEqual([...events[side]].sort());
      for (const r of got) expect(JSON.parse(String(r.body)).workspace_id).toBe(client.identity.workspaceId);
    }
  });

  test('events committed while no relay runs are delivered once a relay starts', async () => {
    const { startRelay } = harness({ relay: false });
    const c = serviceClient('events', app, testIdentity());
    const hook = hookPath(200);
    await createEndpoint(c, hook.url);
    const events = [
      await writeEvent(c.identity.workspaceId),
      await writeEvent(c.identity.workspaceId, 'item.created', { id: randomUUID() }),
      await writeEvent(c.identity.workspaceId),
    ];
    // No relay, nothing published and nothing delivered (the point is what follows, once one starts).
    expect(receiver.at(hook.path)).toHaveLength(0);
    expect(await isPublished(events[0]!.id)).toBe(false);

    startRelay();
    await waitFor('all three events', () => receiver.at(hook.path).length === 3);
    expect(
      receiver
        .at(hook.path)
        .map((r) => r.headers['webhook-id'])
        .sort(),
    ).toEqual(events.map((e) => e.id).sort());
    for (const event of events) expect(await isPublished(event.id)).toBe(true);
  });

  test('a relay that crashed after enqueueing but before committing loses nothing and duplicates nothing', async () => {
    const { queue, startRelay } = harness({ relay: false });
    const c = serviceClient('events', app, testIdentity());
    const hook = hookPath(200);
    const endpoint = await createEndpoint(c, hook.url);
    const events = [await writeEvent(c.identity.workspaceId), await writeEvent(c.identity.workspaceId)];

    // Claim and enqueue, then die before the commit that marks the rows published.
    await expect(
      sql.$transaction(async (tx) => {
        await publishOutboxBatch(tx, queue, 100);
        throw new Error('crash before commit');
      }),
    ).rejects.toThrow('crash before commit');
    for (const event of events) expect(await isPublished(event.id)).toBe(false);
    await waitFor('the enqueued deliveries', () => receiver.at(hook.path).length === 2);

    // The next relay publishes the same rows again: the deterministic job ids make that a no-op.
    startRelay();
    await waitFor('the rows to be published', async () => (await isPublished(events[0]!.id)) && (await isPublished(events[1]!.id)));
    // What the second relay enqueued (before its commit) is done: a duplicate would have arrived by now.
    await waitFor('every job for the endpoint to complete', () => jobsDone(queue, [endpoint.id]));
    expect(
      receiver
        .at(hook.path)
        .map((r) => r.headers['webhook-id'])
        .sort(),
    ).toEqual(events.map((e) => e.id).sort());
  });

  test('while Redis is unreachable the relay publishes nothing, locks no rows and closes promptly; the rows go out later', async () => {
    const c = serviceClient('events', app, testIdentity());
    const hook = hookPath(200);
    await createEndpoint(c, hook.url);
    const event = await writeEvent(c.identity.workspaceId);
    const unreachable = createDeliveryQueue('webhooks-down', 'redis://127.0.0.1:1', { prefix: uniqueName('webhooks-test') });
    let refusals = 0;
    unreachable.on('error', () => refusals++);
    const stuck = startOutboxRelay({ sql, queue: unreachable, pollIntervalMs: 20 });
    // The relay has started and Redis has refused it since: a relay that published first would have by now.
    const refusedBefore = refusals;
    await waitFor('Redis to refuse the relay', () => refusals > refusedBefore);
    expect(await isPublished(event.id)).toBe(false);
    // Another relay could claim the row right now: the stuck one holds no lock on it.
    expect(await lockable(event.id)).toBe(true);
    // Closed while Redis is still unreachable: a relay stuck on it would hang here until the test's timeout.
    await stuck.close();
    await unreachable.close();

    harness();
    await waitFor('the delivery once Redis answers', () => receiver.at(hook.path).length === 1);
    expect(await isPublished(event.id)).toBe(true);
  });

  test('when Redis drops mid-run the relay fails fast: rows stay unpublished and unlocked, and go out when Redis is back', async () => {
    // A TCP proxy in front of Redis that the test can cut and restore.
    const sockets = new Set<Socket>();
    const redis = new URL(testRedisUrl());
    const proxy = createNetServer((client) => {
      const upstream = connect(Number(redis.port || 6379), redis.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    const cut = async () => {
      await new Promise<void>((resolve) => {
        proxy.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    };
    cleanups.push(() => (proxy.listening ? cut() : Promise.resolve()));

    const { queue: viaRedis, prefix } = harness({ relay: false });
    const queue = createDeliveryQueue(viaRedis.name, `redis://127.0.0.1:${port}`, { prefix });
    queue.on('error', () => undefined);
    cleanups.push(() => queue.close());
    const logger = createLogger('webhooks-test', 'silent');
    const failedBatches = jest.spyOn(logger, 'warn');
    const relay = startOutboxRelay({ sql, queue, pollIntervalMs: 20, logger });
    cleanups.push(() => relay.close());
    const c = serviceClient('events', app, testIdentity());
    const hook = hookPath(200);
    await createEndpoint(c, hook.url);
    await writeEvent(c.identity.workspaceId);
    await waitFor('the first delivery', () => receiver.at(hook.path).length === 1);

    await cut();
    const event = await writeEvent(c.identity.workspaceId);
    // Two failed batches after the write: the second began with the row committed, and Redis refused it.
    const failedBefore = failedBatches.mock.calls.length;
    await waitFor('a batch holding the row to fail', () => failedBatches.mock.calls.length >= failedBefore + 2);
    expect(await isPublished(event.id)).toBe(false);
    // Each failed batch rolls back at once: the row is not held while Redis is away.
    await waitFor('the row to be lockable', () => lockable(event.id));

    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
    await waitFor('the delivery after Redis is back', () => receiver.at(hook.path).length === 2);
    expect(receiver.at(hook.path)[1]!.headers['webhook-id']).toBe(event.id);
  });

  test('two relays running concurrently deliver each event exactly once per endpoint', async () => {
    const { queue, startRelay } = harness({ relay: false });
    const c = serviceClient('events', app, testIdentity());
    const first = hookPath(200);
    const second = hookPath(200);
    const endpoints = [(await createEndpoint(c, first.url)).id, (await createEndpoint(c, second.url, ['item.updated'])).id];
    const events = [];
    for (let i = 0; i < 30; i++) events.push(await writeEvent(c.identity.workspaceId, 'item.updated', { id: randomUUID(), n: i }));

    startRelay(4);
    startRelay(4);
    await waitFor('every event at both endpoints', () => receiver.at(first.path).length >= 30 && receiver.at(second.path).length >= 30);
    await waitFor('every job to complete', () => jobsDone(queue, endpoints));
    for (const hook of [first, second]) {
      const ids = receiver.at(hook.path).map((r) => r.headers['webhook-id']);
      expect(ids).toHaveLength(30);
      expect(new Set(ids)).toEqual(new Set(events.map((e) => e.id)));
    }
    // One job per (event, endpoint), each completed: nothing enqueued twice, nothing left over.
    const jobs = (await queue.getJobs(['completed', 'failed', 'active', 'waiting', 'prioritized', 'delayed'])).filter((job) =>
      endpoints.includes(job.data.endpoint_id),
    );
    expect(jobs).toHaveLength(60);
    expect(await Promise.all(jobs.map((job) => job.getState()))).toEqual(new Array(60).fill('completed'));
  });
});
