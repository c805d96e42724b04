import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { createLogger, createMetricsRegistry, outboxEvent, type Registry } from '@platform/core';
import { prepareTestDatabase, serviceClient, startReceiver, testDatabaseUrl, testIdentity, testRedisUrl, uniqueName, waitFor, type Receiver } from '@platform/testing';
import { TEST_WEBHOOKS_CONFIG } from './config';
import { createDeliveryQueue } from './deliveries.queue';
import { startServiceWebhooks, type ServiceWebhooks } from './runtime';
import { pgSql } from './sql';
import { testApp } from './test/app';

// Metrics of a service's webhooks: delivery outcomes per attempt, and the delivery queue's depth.
// A database of its own: this relay must not take the outbox rows of deliveries.int.test.ts.
const DATABASE_URL = testDatabaseUrl('webhooks_metrics');
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 5 });
const sql = pgSql(pool);
const app = testApp(sql, { allowPrivate: true });
let receiver: Receiver;
let webhooks: ServiceWebhooks | undefined;
let queueName: string | undefined;

beforeAll(async () => {
  // Afresh on every run, as jest.global-setup.js does for the package's own test database.
  const admin = new URL(DATABASE_URL);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${decodeURIComponent(new URL(DATABASE_URL).pathname.slice(1))}" WITH (FORCE)`).finally(() => client.end());
  await prepareTestDatabase(DATABASE_URL, join(__dirname, '..', 'test', 'migrations'));
  receiver = await startReceiver();
});
afterEach(async () => {
  await webhooks?.close();
  webhooks = undefined;
  if (queueName) {
    const queue = createDeliveryQueue(queueName, testRedisUrl());
    await queue.obliterate({ force: true });
    await queue.close();
  }
});
afterAll(async () => {
  await receiver.close();
  await pool.end();
});

async function sample(registry: Registry, line: string): Promise<number | undefined> {
  const found = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

test('webhook_deliveries_total counts each attempt as succeeded, failed or disabled (410); queue_depth shows the delivery queue', async () => {
  const registry = createMetricsRegistry({ defaultMetrics: false });
  queueName = uniqueName('webhooks-metrics-test');
  webhooks = startServiceWebhooks({
    service: 'metrics-test',
    queueName,
    sql,
    redisUrl: testRedisUrl(),
    config: TEST_WEBHOOKS_CONFIG,
    logger: createLogger('webhooks-metrics-test', 'silent'),
    metrics: registry,
  });
  // Every outcome is a series from the start, at 0.
  for (const outcome of ['succeeded', 'failed', 'disabled']) expect(await sample(registry, `webhook_deliveries_total{outcome="${outcome}"}`)).toBe(0);

  const c = serviceClient('events', app, testIdentity());
  const paths = { ok: `/hooks/${randomUUID()}`, failing: `/hooks/${randomUUID()}`, gone: `/hooks/${randomUUID()}` };
  receiver.answer(paths.ok, 200);
  receiver.answer(paths.failing, 500);
  receiver.answer(paths.gone, 410);
  for (const path of Object.values(paths)) await c.post('/webhook-endpoints', { url: receiver.url(path), events: ['*'] }).expect(201);

  const event = outboxEvent('ticket.validated', c.identity.workspaceId, { id: randomUUID() });
  await sql.$executeRawUnsafe(
    `INSERT INTO "outbox_events" ("id", "workspace_id", "type", "data", "created_at") VALUES ($1::text, $2::uuid, $3::text, $4::jsonb, $5::timestamptz)`,
    event.id,
    c.identity.workspaceId,
    event.type,
    JSON.stringify(event.data),
    event.createdAt,
  );

  // The schedule [50, 100] gives the failing receiver 3 attempts; 410 stops at the first.
  await waitFor('every attempt', async () => (await sample(registry, 'webhook_deliveries_total{outcome="failed"}')) === 3, 15_000);
  expect(await sample(registry, 'webhook_deliveries_total{outcome="succeeded"}')).toBe(1);
  expect(await sample(registry, 'webhook_deliveries_total{outcome="disabled"}')).toBe(1);
  expect(receiver.at(paths.failing)).toHaveLength(3);

  for (const state of ['waiting', 'delayed', 'active', 'failed']) {
    expect(await sample(registry, `queue_depth{queue="${queueName}",state="${state}"}`)).toEqual(expect.any(Number));
  }
  // Two jobs end failed: the 410 one at once, the failing one once its schedule is used up.
  await waitFor('the failed jobs', async () => (await sample(registry, `queue_depth{queue="${queueName}",state="failed"}`)) === 2);
});
