import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import type pg from 'pg';
import { createLogger, createMetricsRegistry, type Registry } from '@platform/core';
import { deleteRedisKeys, serviceClient, startReceiver, testIdentity, testRedisUrl, uniqueName, waitFor, type Receiver } from '@platform/testing';
import { recordOutboxEvents } from './outbox';
import { TEST_WEBHOOKS_CONFIG } from './config';
import { startServiceWebhooks, type ServiceWebhooks } from './runtime';
import type { Sql } from './sql';
import { freshTestDatabase, testApp } from './test/app';

// Metrics of a service's webhooks: delivery outcomes per attempt, and the delivery queue's depth.
// A database of its own: this relay must not take the outbox rows of deliveries.int.test.ts.
let pool: pg.Pool;
let sql: Sql;
let app: Express;
let receiver: Receiver;
let webhooks: ServiceWebhooks | undefined;
const prefix = uniqueName('webhooks-metrics-test');

beforeAll(async () => {
  ({ pool, sql } = await freshTestDatabase('webhooks_metrics'));
  app = testApp(sql, { allowPrivate: true });
  receiver = await startReceiver();
});
afterEach(async () => {
  await webhooks?.close();
  webhooks = undefined;
  await deleteRedisKeys(prefix, testRedisUrl());
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
  const queueName = 'webhooks-metrics-test';
  webhooks = startServiceWebhooks({
    service: 'metrics-test',
    sql,
    redis: testRedisUrl(),
    config: { ...TEST_WEBHOOKS_CONFIG, QUEUE_PREFIX: prefix },
    logger: createLogger('webhooks-metrics-test', 'silent'),
    metrics: registry,
  });
  // Every outcome is a series from the start, at 0.
  for (const outcome of ['succeeded', 'failed', 'disabled']) expect(await sample(registry, `webhook_deliveries_total{outcome="${outcome}"}`)).toBe(0);
  for (const reason of ['unknown_endpoint', 'endpoint_disabled', 'invalid_job']) {
    expect(await sample(registry, `webhook_deliveries_undeliverable_total{reason="${reason}"}`)).toBe(0);
  }

  const c = serviceClient('events', app, testIdentity());
  const paths = { ok: `/hooks/${randomUUID()}`, failing: `/hooks/${randomUUID()}`, gone: `/hooks/${randomUUID()}` };
  receiver.answer(paths.ok, 200);
  receiver.answer(paths.failing, 500);
  receiver.answer(paths.gone, 410);
  for (const path of Object.values(paths)) await c.post('/webhook-endpoints', { url: receiver.url(path), events: ['*'] }).expect(201);

  await recordOutboxEvents(sql, [{ type: 'ticket.validated', workspaceId: c.identity.workspaceId, data: { id: randomUUID() } }]);

  // The schedule [50, 100] gives the failing receiver 3 attempts; 410 stops at the first.
  await waitFor('every attempt', async () => (await sample(registry, 'webhook_deliveries_total{outcome="failed"}')) === 3);
  expect(await sample(registry, 'webhook_deliveries_total{outcome="succeeded"}')).toBe(1);
  expect(await sample(registry, 'webhook_deliveries_total{outcome="disabled"}')).toBe(1);
  expect(receiver.at(paths.failing)).toHaveLength(3);

  for (const state of ['waiting', 'delayed', 'active', 'failed']) {
    expect(await sample(registry, `queue_depth{queue="${queueName}",state="${state}"}`)).toEqual(expect.any(Number));
  }
  // Two jobs end failed: the 410 one at once, the failing one once its schedule is used up.
  await waitFor('the failed jobs', async () => (await sample(registry, `queue_depth{queue="${queueName}",state="failed"}`)) === 2);
});
