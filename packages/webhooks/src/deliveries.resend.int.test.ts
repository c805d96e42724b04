import { randomUUID } from 'node:crypto';
import { type EventType } from '@platform/core';
import {
  deleteRedisKeys,
  serviceClient,
  startReceiver,
  testIdentity,
  testRedisUrl,
  uniqueName,
  waitFor,
  type Answer,
  type Receiver,
  type ServiceClient,
} from '@platform/testing';
import { createDeliveryQueue, deliveryJobId, type DeliveryQueue } from './deliveries.queue';
import { startDeliveryWorker } from './deliveries.worker';
import { recordOutboxEvents } from './outbox';
import { startOutboxRelay } from './outbox-relay';
import { testApp, testSql } from './test/app';
import { verifyWebhook, type WebhookSecret } from './webhook-signature';

const { pool, sql } = testSql();
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await pool.end();
});

let cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** One test's delivery queue, worker and relay under a key prefix of their own, and the webhook routes resending to that queue. */
function harness(schedule: number[]): { queue: DeliveryQueue; client: ServiceClient } {
  const prefix = uniqueName('webhooks-resend-test');
  const queueName = 'webhooks-test';
  const queue = createDeliveryQueue(queueName, testRedisUrl(), { prefix });
  const worker = startDeliveryWorker({ sql, connection: { url: testRedisUrl() }, queueName, prefix, schedule, timeoutMs: 2000, allowPrivate: true });
  const relay = startOutboxRelay({ sql, queue, pollIntervalMs: 20 });
  cleanups.push(async () => {
    await queue.close();
    await deleteRedisKeys(prefix, testRedisUrl());
  });
  cleanups.push(() => worker.close());
  cleanups.push(() => relay.close());
  return { queue, client: serviceClient('events', testApp(sql, { allowPrivate: true, queue }), testIdentity()) };
}

function hookPath(...answers: Answer[]): { path: string; url: string } {
  const path = `/hooks/${randomUUID()}`;
  if (answers.length > 0) receiver.answer(path, ...answers);
  return { path, url: receiver.url(path) };
}

async function createEndpoint(c: ServiceClient, url: string): Promise<{ id: string; secret: WebhookSecret }> {
  return (await c.post('/webhook-endpoints', { url, events: ['*'] }).expect(201)).body;
}

async function writeEvent(workspaceId: string, type: EventType = 'ticket.validated') {
  const [event] = await recordOutboxEvents(sql, [{ type, workspaceId, data: { id: randomUUID(), status: 'validated' } }]);
  return event!;
}

interface Record {
  id: string;
  event_id: string;
  attempt: number;
  status: string;
  response_status: number | null;
}

async function records(c: ServiceClient, endpointId: string): Promise<Record[]> {
  return (await c.get(`/webhook-endpoints/${endpointId}/deliveries?limit=100`).expect(200)).body.data as Record[];
}

function recordsUntil(c: ServiceClient, endpointId: string, count: number): Promise<Record[]> {
  return waitFor(`${count} delivery records`, async () => {
    const list = await records(c, endpointId);
    return list.length >= count && list;
  });
}

describe('POST /webhook-endpoints/{id}/deliveries/{delivery_id}/resend', () => {
  test('a delivered event is sent again to the endpoint: same webhook-id and body, signed, recorded as the next attempt', async () => {
    const { queue, client: c } = harness([50]);
    const hook = hookPath(200);
    const endpoint = await createEndpoint(c, hook.url);
    const event = await writeEvent(c.identity.workspaceId);
    const [first] = await recordsUntil(c, endpoint.id, 1);
    expect(first).toMatchObject({ event_id: event.id, attempt: 1, status: 'succeeded' });

    const answer = await c.post(`/webhook-endpoints/${endpoint.id}/deliveries/${first!.id}/resend`).expect(202);
    expect(answer.body).toEqual({ endpoint_id: endpoint.id, event_id: event.id, event_type: 'ticket.validated', attempt: 2, status: 'queued' });

    const [, again] = await waitFor('the event a second time', () => receiver.at(hook.path).length === 2 && receiver.at(hook.path));
    const [original] = receiver.at(hook.path);
    expect(again!.headers['webhook-id']).toBe(event.id);
    expect(again!.body).toBe(original!.body);
    expect(verifyWebhook(again!.body, again!.headers, endpoint.secret)).toMatchObject({ id: event.id, type: 'ticket.validated' });
    const list = await recordsUntil(c, endpoint.id, 2);
    expect(list.map((r) => [r.event_id, r.attempt, r.status])).toEqual([
      [event.id, 1, 'succeeded'],
      [event.id, 2, 'succeeded'],
    ]);
    // The resend's job was added as the relay's are: ranked among its workspace's pending deliveries (it was the only one).
    expect((await queue.getJob(deliveryJobId(event.id, endpoint.id)))?.priority).toBe(1);
  });

  test('after the retries were used up, a resend reaches the repaired receiver as the next attempt', async () => {
    const { client: c } = harness([30]);
    const hook = hookPath(500, 500, 204);
    const endpoint = await createEndpoint(c, hook.url);
    const event = await writeEvent(c.identity.workspaceId);
    const failed = await recordsUntil(c, endpoint.id, 2);
    expect(failed.map((r) => [r.attempt, r.status])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
    ]);

    await c
      .post(`/webhook-endpoints/${endpoint.id}/deliveries/${failed[0]!.id}/resend`)
      .expect(202, { endpoint_id: endpoint.id, event_id: event.id, event_type: 'ticket.validated', attempt: 3, status: 'queued' });
    const list = await recordsUntil(c, endpoint.id, 3);
    expect(list[2]).toMatchObject({ event_id: event.id, attempt: 3, status: 'succeeded', response_status: 204 });
  });

  test('while a retry waits on the schedule, a resend makes it now: one job for the pair, no second one', async () => {
    // An hour between attempts: only the resend can make the second one within the test.
    const { client: c, queue } = harness([3_600_000]);
    const hook = hookPath(503, 200);
    const endpoint = await createEndpoint(c, hook.url);
    const event = await writeEvent(c.identity.workspaceId);
    const [failed] = await recordsUntil(c, endpoint.id, 1);
    await waitFor(
      'the retry to wait on the schedule',
      async () => (await (await queue.getJob(deliveryJobId(event.id, endpoint.id)))?.getState()) === 'delayed',
    );

    await c.post(`/webhook-endpoints/${endpoint.id}/deliveries/${failed!.id}/resend`).expect(202);
    const list = await recordsUntil(c, endpoint.id, 2);
    expect(list.map((r) => [r.attempt, r.status])).toEqual([
      [1, 'failed'],
      [2, 'succeeded'],
    ]);
    await waitFor('the job to complete', async () => (await (await queue.getJob(deliveryJobId(event.id, endpoint.id)))?.getState()) === 'completed');
    expect(await queue.getJobCounts('completed', 'delayed', 'waiting', 'prioritized', 'active')).toEqual({
      completed: 1,
      delayed: 0,
      waiting: 0,
      prioritized: 0,
      active: 0,
    });
  });

  test('a disabled endpoint is 409 endpoint_disabled; an event the outbox no longer keeps is 409 event_expired', async () => {
    const { client: c } = harness([50]);
    const hook = hookPath(200);
    const endpoint = await createEndpoint(c, hook.url);
    const event = await writeEvent(c.identity.workspaceId);
    const [record] = await recordsUntil(c, endpoint.id, 1);
    const resend = `/webhook-endpoints/${endpoint.id}/deliveries/${record!.id}/resend`;

    await c.patch(`/webhook-endpoints/${endpoint.id}`, { enabled: false }).expect(200);
    const disabled = await c.post(resend).expect(409);
    expect(disabled.body.error).toMatchObject({ code: 'conflict', errors: [{ in: 'path', field: 'id', code: 'endpoint_disabled' }] });

    await c.patch(`/webhook-endpoints/${endpoint.id}`, { enabled: true }).expect(200);
    await sql.$executeRawUnsafe(`DELETE FROM "outbox_events" WHERE "id" = $1::text`, event.id);
    const expired = await c.post(resend).expect(409);
    expect(expired.body.error).toMatchObject({ code: 'conflict', errors: [{ in: 'path', field: 'delivery_id', code: 'event_expired' }] });
    expect(await records(c, endpoint.id)).toHaveLength(1);
  });

  test("404 for an unknown delivery, another endpoint's delivery, another workspace's endpoint", async () => {
    const { client: c, queue } = harness([50]);
    const stranger = serviceClient('events', testApp(sql, { allowPrivate: true, queue }), testIdentity());
    const hook = hookPath(200);
    const endpoint = await createEndpoint(c, hook.url);
    const other = await createEndpoint(c, hookPath(200).url);
    await writeEvent(c.identity.workspaceId);
    const [record] = await recordsUntil(c, endpoint.id, 1);

    await c.post(`/webhook-endpoints/${endpoint.id}/deliveries/${randomUUID()}/resend`).expect(404);
    await c.post(`/webhook-endpoints/${other.id}/deliveries/${record!.id}/resend`).expect(404);
    await stranger.post(`/webhook-endpoints/${endpoint.id}/deliveries/${record!.id}/resend`).expect(404);
    await c.post(`/webhook-endpoints/${endpoint.id}/deliveries/not-a-uuid/resend`).expect(400);
    await c.post(`/webhook-endpoints/${endpoint.id}/deliveries/${record!.id}/resend`, { attempt: 1 }).expect(400);
  });

  test('without a delivery queue (no webhooks runtime) a resend is 503, after the checks', async () => {
    const { client: c } = harness([50]);
    const bare = serviceClient('events', testApp(sql, { allowPrivate: true }), c.identity);
    const endpoint = await createEndpoint(c, hookPath(200).url);
    await writeEvent(c.identity.workspaceId);
    const [record] = await recordsUntil(c, endpoint.id, 1);
    await bare.post(`/webhook-endpoints/${endpoint.id}/deliveries/${randomUUID()}/resend`).expect(404);
    const refused = await bare.post(`/webhook-endpoints/${endpoint.id}/deliveries/${record!.id}/resend`).expect(503);
    expect(refused.body.error.code).toBe('temporarily_unavailable');
  });
});
