import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Router } from 'express';
import pino from 'pino';
import request from 'supertest';
import { serviceSigningKey, signedIdentityHeaders } from '../http/internal-signature';
import { createLogger } from '../process/logger';
import { createMetricsRegistry, HttpMetrics, Registry, registeredCounter, startMetricsServer, trackQueueDepth, UNMATCHED_ROUTE } from './metrics';
import { createServiceApp } from '../http/service-app';

const SECRET = 'metrics-test-secret-0123456789';
const silent = createLogger('metrics-test', 'silent');

/** The sample lines of one metric in the registry's Prometheus text. */
async function samples(registry: Registry, name: string): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

async function listening(server: Server): Promise<string> {
  if (!server.listening) await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('HttpMetrics', () => {
  test('counts and times requests by method, route pattern and status, one RouteMetrics per method and pattern', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const metrics = new HttpMetrics(registry);
    const route = metrics.route('POST', '/tickets/:id/validate');
    expect(metrics.route('POST', '/tickets/:id/validate')).toBe(route);
    expect(metrics.route('GET', '/tickets/:id/validate')).not.toBe(route);
    route.observe(200, 0.003);
    route.observe(200, 0.2);
    route.observe(409, 0.004);
    route.observe(404, 0.3);

    expect(await samples(registry, 'http_requests_total')).toEqual([
      'http_requests_total{method="POST",route="/tickets/:id/validate",status="200"} 2',
      'http_requests_total{method="POST",route="/tickets/:id/validate",status="409"} 1',
      'http_requests_total{method="POST",route="/tickets/:id/validate",status="404"} 1',
    ]);
    const buckets = await samples(registry, 'http_request_duration_seconds_bucket');
    expect(buckets).toContain('http_request_duration_seconds_bucket{le="0.005",method="POST",route="/tickets/:id/validate",status_class="2xx"} 1');
    expect(buckets).toContain('http_request_duration_seconds_bucket{le="0.25",method="POST",route="/tickets/:id/validate",status_class="2xx"} 2');
    // 409 and 404 are one series of the histogram: its series grow by class, not by exact code.
    expect(buckets).toContain('http_request_duration_seconds_bucket{le="0.005",method="POST",route="/tickets/:id/validate",status_class="4xx"} 1');
    expect(buckets).toContain('http_request_duration_seconds_bucket{le="0.5",method="POST",route="/tickets/:id/validate",status_class="4xx"} 2');
    expect(await samples(registry, 'http_request_duration_seconds_count')).toEqual([
      'http_request_duration_seconds_count{method="POST",route="/tickets/:id/validate",status_class="2xx"} 2',
      'http_request_duration_seconds_count{method="POST",route="/tickets/:id/validate",status_class="4xx"} 2',
    ]);
  });

  test('renders a Prometheus histogram: cumulative buckets, +Inf for a value past the last bound, sum and count', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const route = new HttpMetrics(registry, [0.1, 1]).route('GET', '/x');
    route.observe(200, 0.1);
    route.observe(200, 0.5);
    route.observe(200, 12);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(await samples(registry, 'http_request_duration_seconds_bucket')).toEqual([
      'http_request_duration_seconds_bucket{le="0.1",method="GET",route="/x",status_class="2xx"} 1',
      'http_request_duration_seconds_bucket{le="1",method="GET",route="/x",status_class="2xx"} 2',
      'http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/x",status_class="2xx"} 3',
    ]);
    expect(await samples(registry, 'http_request_duration_seconds_sum')).toEqual([
      'http_request_duration_seconds_sum{method="GET",route="/x",status_class="2xx"} 12.6',
    ]);
    expect(await samples(registry, 'http_request_duration_seconds_count')).toEqual([
      'http_request_duration_seconds_count{method="GET",route="/x",status_class="2xx"} 3',
    ]);
    registry.resetMetrics();
    expect(await samples(registry, 'http_requests_total')).toEqual(['http_requests_total{method="GET",route="/x",status="200"} 0']);
  });
});

describe('createServiceApp with metrics', () => {
  const TICKET = '0b6c3f0e-6f1e-4a43-9a4e-3b1c6b6f2a11';

  function app(registry: Registry) {
    const routes = Router();
    routes.post('/tickets/:id/validate', (req, res) => {
      res.status(req.params.id === TICKET ? 200 : 409).json({ ok: true });
    });
    return createServiceApp({
      service: 'events',
      logger: silent,
      internalSecret: SECRET,
      routes,
      ready: { database: async () => undefined },
      metrics: new HttpMetrics(registry),
    });
  }
  const signed = (path: string) =>
    signedIdentityHeaders(serviceSigningKey(SECRET, 'events'), {
      workspaceId: 'ws',
      keyId: 'key',
      scopes: null,
      method: 'POST',
      pathAndQuery: path,
      requestId: 'metrics-test',
    });

  test('labels a request with its route pattern, never the raw path; unknown and unsigned requests are "unmatched"', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const a = app(registry);
    await request(a)
      .post(`/tickets/${TICKET}/validate`)
      .set(signed(`/tickets/${TICKET}/validate`))
      .expect(200);
    await request(a).post('/tickets/other/validate').set(signed('/tickets/other/validate')).expect(409);
    await request(a).post(`/tickets/${TICKET}/validate`).expect(401);
    await request(a).get('/nowhere/at/all').expect(401);
    await request(a).get('/healthz').expect(200);

    const counted = await samples(registry, 'http_requests_total');
    expect(counted).toEqual(
      expect.arrayContaining([
        'http_requests_total{method="POST",route="/tickets/:id/validate",status="200"} 1',
        'http_requests_total{method="POST",route="/tickets/:id/validate",status="409"} 1',
        `http_requests_total{method="POST",route="${UNMATCHED_ROUTE}",status="401"} 1`,
        `http_requests_total{method="GET",route="${UNMATCHED_ROUTE}",status="401"} 1`,
        'http_requests_total{method="GET",route="/healthz",status="200"} 1',
      ]),
    );
    const text = await registry.metrics();
    expect(text).not.toContain(TICKET);
    expect(text).not.toContain('/nowhere');
  });
});

describe('trackQueueDepth', () => {
  test('reads each queue at scrape time; a queue that does not answer is left out of that scrape, the others stay', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    let reads = 0;
    trackQueueDepth(registry, {
      name: 'runs',
      getJobCounts: async (...types) => {
        reads++;
        expect(types).toEqual(['wait', 'prioritized', 'delayed', 'active', 'failed']);
        return { wait: 3, prioritized: 1, delayed: 2, active: 1, failed: 0 };
      },
    });
    trackQueueDepth(registry, { name: 'webhooks-events', getJobCounts: () => new Promise(() => undefined) });
    expect(reads).toBe(0);

    // The scrape answers although one queue never does (its read is cut short): no hang.
    expect(await samples(registry, 'queue_depth')).toEqual([
      'queue_depth{queue="runs",state="waiting"} 4',
      'queue_depth{queue="runs",state="delayed"} 2',
      'queue_depth{queue="runs",state="active"} 1',
      'queue_depth{queue="runs",state="failed"} 0',
    ]);
    expect(reads).toBe(1);
  });
});

describe('registeredCounter', () => {
  test('two components asking for one counter share it', () => {
    const registry = new Registry();
    const a = registeredCounter(registry, 'things_total', 'Things.', ['outcome']);
    expect(registeredCounter(registry, 'things_total', 'Things.', ['outcome'])).toBe(a);
  });
});

describe('startMetricsServer', () => {
  let servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    servers = [];
  });

  test('serves GET /metrics as Prometheus text with the process metrics, and nothing else', async () => {
    const registry = createMetricsRegistry();
    new HttpMetrics(registry).route('GET', '/x').observe(200, 0.01);
    const server = startMetricsServer(0, registry, silent);
    servers.push(server);
    const base = await listening(server);

    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text).toContain('http_requests_total{method="GET",route="/x",status="200"} 1');
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    // prom-client's gauges named like counters are dropped; their per-type gauges stay.
    expect(text).not.toMatch(/^nodejs_active_(handles|requests|resources)_total/m);
    expect(text).toMatch(/^# TYPE nodejs_active_handles gauge$/m);

    expect((await fetch(`${base}/metrics?x=1`)).status).toBe(200);
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/healthz`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  test('listens on 127.0.0.1 unless given a host (HOST)', async () => {
    const loopback = startMetricsServer(0, new Registry(), silent);
    const everywhere = startMetricsServer(0, new Registry(), silent, '0.0.0.0');
    servers.push(loopback, everywhere);
    await Promise.all([listening(loopback), listening(everywhere)]);
    expect((loopback.address() as AddressInfo).address).toBe('127.0.0.1');
    expect((everywhere.address() as AddressInfo).address).toBe('0.0.0.0');
  });

  test('a port already in use is logged, and the process goes on', async () => {
    const first = startMetricsServer(0, new Registry(), silent);
    servers.push(first);
    const port = new URL(await listening(first)).port;
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    const second = startMetricsServer(Number(port), new Registry(), logger);
    await once(second, 'error');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.join('')).toContain('metrics port unavailable');
  });
});
