import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, createMetricsRegistry, startMetricsServer } from '@platform/core';
import { serviceClient, testIdentity } from '@platform/testing';
import { startTestApp } from './test/app';

// Contract section 12: GET /metrics (Prometheus text) on METRICS_PORT, never on the API's port.
let app: Awaited<ReturnType<typeof startTestApp>>;
let metricsServer: Server;
let base: string;

beforeAll(async () => {
  const registry = createMetricsRegistry();
  // No webhooks here: a second outbox relay on the test database would take other files' rows
  // (main.int.test.ts checks the delivery queue's depth on the real process).
  app = await startTestApp({ metrics: registry });
  metricsServer = startMetricsServer(0, registry, createLogger('warehouse-metrics-test', 'silent'));
  await once(metricsServer, 'listening');
  base = `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => metricsServer.close(resolve));
  await app.close();
});

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('requests are counted and timed by route pattern and status on the metrics port; the API port has no /metrics', async () => {
  const c = serviceClient('warehouse', app.server, testIdentity());
  const item = await c.post('/items', { sku: `M-${Date.now()}`, name: 'Metered' }).expect(201);
  await c.get(`/items/${item.body.id}`).expect(200);
  await c.get('/items/not-a-uuid').expect(400);

  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(sample(text, 'http_requests_total{method="POST",route="/items",status="201"}')).toBe(1);
  expect(sample(text, 'http_requests_total{method="GET",route="/items/:id",status="200"}')).toBe(1);
  expect(sample(text, 'http_requests_total{method="GET",route="/items/:id",status="400"}')).toBe(1);
  expect(sample(text, 'http_request_duration_seconds_count{method="GET",route="/items/:id",status="200"}')).toBe(1);
  expect(text).not.toContain(item.body.id);
  expect(text).not.toContain('not-a-uuid');
  expect(text).toMatch(/^nodejs_heap_size_used_bytes \d+/m);

  const own = await c.get('/metrics').expect(404);
  expect(own.text).not.toContain('http_requests_total');
});
