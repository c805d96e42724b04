import request from 'supertest';
import { metricSample, serviceClient, testIdentity, withMetrics, type ServiceTestApp, type WithMetrics } from '@platform/testing';
import type { Database } from './database';
import { startTestApp } from './test/app';

// Contract section 12: GET /metrics (Prometheus text) on METRICS_PORT, never on the API's port.
let app: WithMetrics<ServiceTestApp<Database>>;

beforeAll(async () => {
  // No webhooks here: a second outbox relay on the test database would take other files' rows
  // (drain.int.test.ts checks the delivery queue's depth on the real process).
  app = await withMetrics((registry) => startTestApp({ metrics: registry }));
});
afterAll(() => app.close());

test('a validation is counted and timed under its route pattern and status, never its ticket id', async () => {
  const c = serviceClient('events', app.server, testIdentity());
  const event = await c.post('/events', { name: 'Metrics night', starts_at: '2025-06-01T18:00:00Z' }).expect(201);
  const ticket = await c.post(`/events/${event.body.id}/tickets`).expect(201);
  await c.post(`/tickets/${ticket.body.id}/validate`).expect(200);
  await c.post(`/tickets/${ticket.body.id}/validate`).expect(409);

  const text = await app.metrics.scrape();
  expect(text).toContain('# TYPE http_requests_total counter');
  expect(text).toContain('# TYPE http_request_duration_seconds histogram');
  expect(metricSample(text, 'http_requests_total{method="POST",route="/tickets/:id/validate",status="200"}')).toBe(1);
  expect(metricSample(text, 'http_requests_total{method="POST",route="/tickets/:id/validate",status="409"}')).toBe(1);
  expect(metricSample(text, 'http_request_duration_seconds_count{method="POST",route="/tickets/:id/validate",status_class="2xx"}')).toBe(1);
  expect(metricSample(text, 'http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/tickets/:id/validate",status_class="4xx"}')).toBe(1);
  expect(metricSample(text, 'http_requests_total{method="POST",route="/events/:id/tickets",status="201"}')).toBe(1);
  expect(text).not.toContain(ticket.body.id);
  expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
});

test('the API port does not serve /metrics', async () => {
  const c = serviceClient('events', app.server, testIdentity());
  const signed = await c.get('/metrics').expect(404);
  expect(signed.text).not.toContain('http_requests_total');
  await request(app.server).get('/metrics').expect(401);
});
