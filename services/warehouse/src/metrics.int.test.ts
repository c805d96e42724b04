import { metricSample, serviceClient, testIdentity, withMetrics, type ServiceTestApp, type WithMetrics } from '@platform/testing';
import type { Database } from './database';
import { startTestApp } from './test/app';

// Contract section 12: GET /metrics (Prometheus text) on METRICS_PORT, never on the API's port.
let app: WithMetrics<ServiceTestApp<Database>>;

beforeAll(async () => {
  // No webhooks here: a second outbox relay on the test database would take other files' rows
  // (main.int.test.ts checks the delivery queue's depth on the real process).
  app = await withMetrics((registry) => startTestApp({ metrics: registry }));
});
afterAll(() => app.close());

test('requests are counted and timed by route pattern and status on the metrics port; the API port has no /metrics', async () => {
  const c = serviceClient('warehouse', app.server, testIdentity());
  const item = await c.post('/items', { sku: `M-${Date.now()}`, name: 'Metered' }).expect(201);
  await c.get(`/items/${item.body.id}`).expect(200);
  await c.get('/items/not-a-uuid').expect(400);

  const text = await app.metrics.scrape();
  expect(metricSample(text, 'http_requests_total{method="POST",route="/items",status="201"}')).toBe(1);
  expect(metricSample(text, 'http_requests_total{method="GET",route="/items/:id",status="200"}')).toBe(1);
  expect(metricSample(text, 'http_requests_total{method="GET",route="/items/:id",status="400"}')).toBe(1);
  expect(metricSample(text, 'http_request_duration_seconds_count{method="GET",route="/items/:id",status_class="2xx"}')).toBe(1);
  expect(text).not.toContain(item.body.id);
  expect(text).not.toContain('not-a-uuid');
  expect(text).toMatch(/^nodejs_heap_size_used_bytes \d+/m);

  const own = await c.get('/metrics').expect(404);
  expect(own.text).not.toContain('http_requests_total');
});
