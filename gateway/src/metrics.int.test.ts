import { randomUUID } from 'node:crypto';
import { metricSample, waitFor, withMetrics } from '@platform/testing';
import {
  ADMIN_TOKEN,
  allUpstreams,
  createTestKey,
  DEAD_REDIS_URL,
  httpClient,
  startEchoUpstream,
  startGateway,
  type EchoUpstream,
  type GatewayOptions,
  type HttpClient,
  type TestGateway,
} from './test/gateway';

// Contract sections 6 and 12: the gateway's metrics on METRICS_PORT (never its public port):
// requests by route pattern and status, 429s by bucket, and the in-memory fallback of the limiter.

let upstream: EchoUpstream;
let client: HttpClient;
let gateways: TestGateway[] = [];

beforeAll(async () => {
  upstream = await startEchoUpstream();
  client = httpClient();
});
afterEach(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  gateways = [];
});
afterAll(async () => {
  await client.close();
  await upstream.close();
});

async function gatewayWithMetrics(options: GatewayOptions = {}): Promise<{ gw: TestGateway; scrape: () => Promise<string> }> {
  const gw = await withMetrics((registry) => startGateway({ upstreams: allUpstreams(upstream.url), metrics: registry, ...options }));
  gateways.push(gw);
  return { gw, scrape: gw.metrics.scrape };
}

test('requests are counted and timed by public route pattern and status; the public port has no /metrics', async () => {
  const { gw, scrape } = await gatewayWithMetrics();
  const { token, workspaceId } = await createTestKey(gw.stores);
  const ticket = randomUUID();
  expect((await client.call(gw.url, 'POST', `/events/v0/tickets/${ticket}/validate`, { token, body: {} })).status).toBe(200);
  expect((await client.call(gw.url, 'POST', `/events/v0/tickets/${randomUUID()}/validate`, { token, body: {} })).status).toBe(200);
  expect((await client.call(gw.url, 'POST', `/events/v0/tickets/${ticket}/validate`, { body: {} })).status).toBe(401);
  expect((await client.call(gw.url, 'GET', `/events/v0/no/such/${ticket}`, { token })).status).toBe(404);
  expect((await client.call(gw.url, 'GET', '/healthz')).status).toBe(200);
  expect((await client.call(gw.url, 'GET', `/admin/v1/workspaces/${workspaceId}`, { token: ADMIN_TOKEN })).status).toBe(200);
  expect((await client.call(gw.url, 'GET', '/admin/v1/workspaces', { token: 'not-the-admin-token' })).status).toBe(401);
  // Contract section 12: never on the public port, and the services' own /metrics is not proxied.
  expect((await client.call(gw.url, 'GET', '/metrics')).status).toBe(404);
  expect((await client.call(gw.url, 'GET', '/events/v0/metrics', { token })).status).toBe(404);

  const text = await scrape();
  expect(metricSample(text, 'http_requests_total{method="POST",route="/events/v0/tickets/:id/validate",status="200"}')).toBe(2);
  expect(metricSample(text, 'http_requests_total{method="POST",route="/events/v0/tickets/:id/validate",status="401"}')).toBe(1);
  expect(metricSample(text, 'http_request_duration_seconds_count{method="POST",route="/events/v0/tickets/:id/validate",status_class="2xx"}')).toBe(2);
  expect(metricSample(text, 'http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/events/v0/tickets/:id/validate",status_class="2xx"}')).toBe(
    2,
  );
  expect(metricSample(text, 'http_requests_total{method="GET",route="/events/v0/*",status="404"}')).toBe(2);
  expect(metricSample(text, 'http_requests_total{method="GET",route="/healthz",status="200"}')).toBe(1);
  expect(metricSample(text, 'http_requests_total{method="GET",route="/admin/v1/workspaces/:id",status="200"}')).toBe(1);
  expect(metricSample(text, 'http_requests_total{method="GET",route="/admin/v1/*",status="401"}')).toBe(1);
  expect(metricSample(text, 'http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
  // Raw paths never become labels.
  expect(text).not.toContain(ticket);
  expect(text).not.toContain(workspaceId);
  expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
  expect(metricSample(text, 'gateway_api_key_cache_entries')).toBeGreaterThanOrEqual(1);
});

test('the latency histogram grows by status class, not by exact status: varied answers stay a few series (issue 29)', async () => {
  const { gw, scrape } = await gatewayWithMetrics();
  const { token } = await createTestKey(gw.stores);
  const statuses = [200, 201, 202, 400, 401, 403, 404, 409, 410, 415, 422, 429, 500, 502, 503];
  for (const status of statuses) {
    expect((await client.call(gw.url, 'GET', `/events/v0/tickets/${randomUUID()}?status=${status}`, { token })).status).toBe(status);
  }
  const text = await scrape();
  const seriesOf = (metric: string) => text.split('\n').filter((line) => line.startsWith(`${metric}{`) && line.includes('route="/events/v0/tickets/:id"'));
  // The counter keeps every exact status; the histogram's count has one series per class.
  expect(seriesOf('http_requests_total')).toHaveLength(statuses.length);
  expect(
    seriesOf('http_request_duration_seconds_count')
      .map((line) => /status_class="(\dxx)"/.exec(line)?.[1])
      .sort(),
  ).toEqual(['2xx', '4xx', '5xx']);
  // Every bucket line is a series: bounded by classes x buckets, whatever the number of exact codes.
  const bucketsPerSeries = seriesOf('http_request_duration_seconds_bucket').length / 3;
  expect(seriesOf('http_request_duration_seconds_bucket')).toHaveLength(3 * bucketsPerSeries);
  expect(bucketsPerSeries).toBeLessThanOrEqual(20);
});

test('a 429 counts in gateway_rate_limited_total under its bucket; Redis counts, so the fallback gauge is 0', async () => {
  const { gw, scrape } = await gatewayWithMetrics({ limits: { events: 2, 'pipeline-runs': 1, 'failed-auth': 2 } });
  const { token } = await createTestKey(gw.stores);
  let text = await scrape();
  for (const bucket of ['events', 'warehouse', 'warehouse-bulk', 'pipelines', 'pipeline-runs', 'failed-auth']) {
    expect(metricSample(text, `gateway_rate_limited_total{bucket="${bucket}"}`)).toBe(0);
  }

  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await client.call(gw.url, 'GET', `/events/v0/events/${randomUUID()}`, { token })).status);
  expect(statuses).toEqual([200, 200, 429]);
  const runs = `/pipelines/v3/pipelines/${randomUUID()}/runs`;
  expect((await client.call(gw.url, 'POST', runs, { token, body: {} })).status).toBe(200);
  expect((await client.call(gw.url, 'POST', runs, { token, body: {} })).status).toBe(429);
  // The per-IP limit on failed authentications, on the hot path and on the admin API alike.
  const failed = [];
  for (let i = 0; i < 2; i++) failed.push((await client.call(gw.url, 'GET', '/events/v0/events', { token: 'sk_wrong' })).status);
  failed.push((await client.call(gw.url, 'GET', '/admin/v1/workspaces', { token: 'wrong-admin-token' })).status);
  expect(failed).toEqual([401, 401, 429]);

  text = await scrape();
  expect(metricSample(text, 'gateway_rate_limited_total{bucket="events"}')).toBe(1);
  expect(metricSample(text, 'gateway_rate_limited_total{bucket="pipeline-runs"}')).toBe(1);
  expect(metricSample(text, 'gateway_rate_limited_total{bucket="failed-auth"}')).toBe(1);
  expect(metricSample(text, 'gateway_rate_limited_total{bucket="pipelines"}')).toBe(0);
  expect(metricSample(text, 'http_requests_total{method="GET",route="/events/v0/events/:id",status="429"}')).toBe(1);
  expect(metricSample(text, 'gateway_rate_limit_fallback')).toBe(0);
  expect(metricSample(text, 'gateway_rate_limit_redis_failures_total')).toBe(0);
});

test('with Redis on a dead port the fallback gauge is 1 and in-memory 429s are counted too', async () => {
  const { gw, scrape } = await gatewayWithMetrics({ redisUrl: DEAD_REDIS_URL, limits: { events: 1 } });
  const { token } = await createTestKey(gw.stores);
  expect(metricSample(await scrape(), 'gateway_rate_limit_fallback')).toBe(0);
  expect((await client.call(gw.url, 'GET', `/events/v0/events/${randomUUID()}`, { token })).status).toBe(200);
  expect((await client.call(gw.url, 'GET', `/events/v0/events/${randomUUID()}`, { token })).status).toBe(429);
  await waitFor('the rate-limit fallback to be counted', async () => metricSample(await scrape(), 'gateway_rate_limit_fallback') === 1, 60_000, 20);
  const text = await scrape();
  expect(metricSample(text, 'gateway_rate_limited_total{bucket="events"}')).toBe(1);
  expect(gw.app.state().rateLimiter.mode).toBe('memory');
});

test('X-RateLimit-Remaining counts down by one per request', async () => {
  const { gw } = await gatewayWithMetrics({});
  const { token } = await createTestKey(gw.stores);
  const remaining: string[] = [];
  for (let i = 0; i < 30; i++)
    remaining.push((await client.call(gw.url, 'GET', `/events/v0/events/${randomUUID()}`, { token })).headers['x-ratelimit-remaining'] as string);
  expect(remaining).toEqual(Array.from({ length: 30 }, (_, i) => String(399 - i)));
});
