import { createServer, type Server } from 'node:http';
import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import { DEFAULT_HOST } from '../process/config';
import { listeningAt } from '../http/server';

// One prom-client for every package: metrics made with another copy would not render in this registry's text.
export { Counter, Gauge, Histogram, Registry };

/**
 * prom-client's default gauges named like counters (`promtool check metrics`: non-counter metrics
 * should not have "_total" suffix). Each is the sum of its per-type gauge, which stays:
 * `sum(nodejs_active_handles)` is what `nodejs_active_handles_total` was.
 */
export const DROPPED_DEFAULT_METRICS: readonly string[] = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** A process's Prometheus registry; by default with Node's process metrics (CPU, memory, event loop lag, GC, handles). */
export function createMetricsRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry });
    for (const name of DROPPED_DEFAULT_METRICS) registry.removeSingleMetric(name);
  }
  return registry;
}

/** The `route` label of requests no route matched (404s, refused signatures): raw paths never become labels. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Seconds; from a 1 ms cache hit to the gateway's 10 s upstream timeout. */
export const HTTP_DURATION_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One status of one route: plain numbers, so counting a request allocates nothing and hashes nothing. */
class StatusSeries {
  count = 0;
  sum = 0;
  /** Per bound, requests that took at most it and more than the bound before (cumulated at scrape time). */
  readonly buckets: Float64Array;
  readonly labels: { method: string; route: string; status: string };

  constructor(method: string, route: string, status: number, bounds: number) {
    this.buckets = new Float64Array(bounds);
    this.labels = { method, route, status: String(status) };
  }
}

/** The request counter and latency histogram of one method and route pattern. */
export class RouteMetrics {
  private readonly byStatus = new Map<number, StatusSeries>();

  constructor(
    private readonly bounds: readonly number[],
    private readonly series: StatusSeries[],
    readonly method: string,
    readonly route: string,
  ) {}

  /** Counts one finished request and its duration in seconds. */
  observe(status: number, seconds: number): void {
    let series = this.byStatus.get(status);
    if (!series) {
      series = new StatusSeries(this.method, this.route, status, this.bounds.length);
      this.byStatus.set(status, series);
      this.series.push(series);
    }
    series.count++;
    series.sum += seconds;
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    // Past the last bound: only +Inf (the count) holds it.
    if (i < bounds.length) series.buckets[i]!++;
  }
}

type HttpLabel = 'method' | 'route' | 'status';
type HistogramLabel = 'method' | 'route' | 'status_class';
type HistogramSample = { labels: Partial<Record<HistogramLabel | 'le', string | number>>; value: number; metricName: string };

/** `2xx`, `4xx`, ...: the histogram's status label, so its series do not multiply by every exact code. */
export function statusClass(status: string | number): string {
  return `${String(status).charAt(0)}xx`;
}

/**
 * `http_request_duration_seconds`, read from the series at scrape time. prom-client's public API
 * cannot take a histogram already counted (Histogram only has observe(), whose label children
 * allocate and hash their labels on every call: 0.8 to 1.6 µs per request against about 30 ns here),
 * so this is the one metric rendered from a custom collector: the registry renders any metric that
 * has a name, help, type and get() (what prom-client's own Histogram returns from get()).
 * Its series are by status class, not exact status: every bucket is a series, so one per exact code
 * made thousands of them under varied traffic; `http_requests_total` keeps the exact status.
 */
class SeriesHistogram {
  readonly name = 'http_request_duration_seconds';
  readonly help = 'Time from the request to the end of its answer, by method, route pattern and status class (2xx, 4xx, ...).';
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(
    private readonly bounds: readonly number[],
    private readonly series: readonly StatusSeries[],
  ) {}

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: HistogramSample[] }> {
    const byClass = new Map<string, { labels: Record<HistogramLabel, string>; buckets: number[]; sum: number; count: number }>();
    for (const s of this.series) {
      const status_class = statusClass(s.labels.status);
      const key = `${s.labels.method} ${s.labels.route} ${status_class}`;
      let group = byClass.get(key);
      if (!group) {
        group = { labels: { method: s.labels.method, route: s.labels.route, status_class }, buckets: this.bounds.map(() => 0), sum: 0, count: 0 };
        byClass.set(key, group);
      }
      group.sum += s.sum;
      group.count += s.count;
      for (let i = 0; i < this.bounds.length; i++) group.buckets[i]! += s.buckets[i]!;
    }
    const values: HistogramSample[] = [];
    for (const group of byClass.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += group.buckets[i]!;
        values.push({ labels: { le: bound, ...group.labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...group.labels }, value: group.count, metricName: `${this.name}_bucket` });
      values.push({ labels: group.labels, value: group.sum, metricName: `${this.name}_sum` });
      values.push({ labels: group.labels, value: group.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  /** Registry.resetMetrics(): every series starts again from zero (the request counter follows). */
  reset(): void {
    for (const s of this.series) {
      s.count = 0;
      s.sum = 0;
      s.buckets.fill(0);
    }
  }
}

/**
 * `http_requests_total` by method, route pattern and status, and `http_request_duration_seconds` by
 * method, route pattern and status class.
 * Prometheus reads them at scrape time; a request only adds to plain numbers of its route and status
 * (prom-client's own label children hash their labels on every call: microseconds per request).
 */
export class HttpMetrics {
  private readonly routes = new Map<string, Map<string, RouteMetrics>>();
  private readonly series: StatusSeries[] = [];
  private readonly bounds: readonly number[];

  constructor(
    /** Where the two metrics are registered; other metrics of the same process may go there too. */
    readonly registry: Registry,
    buckets: readonly number[] = HTTP_DURATION_BUCKETS,
  ) {
    this.bounds = [...buckets].sort((a, b) => a - b);
    const series = this.series;
    new Counter<HttpLabel>({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of series) this.inc(s.labels, s.count);
      },
    });
    // The registry's types list prom-client's four classes; it renders any metric of their shape.
    registry.registerMetric(new SeriesHistogram(this.bounds, series) as unknown as Metric);
    const inFlight = (): number => this.inFlight;
    new Gauge({
      name: 'http_requests_in_flight',
      help: 'HTTP requests whose headers were read and that are not answered yet (a drain waits for them).',
      registers: [registry],
      collect() {
        this.set(inFlight());
      },
    });
  }

  /** Requests read and not yet answered or aborted (httpMetricsMiddleware counts them). */
  inFlight = 0;

  /** The metrics of one method and route pattern (never a raw path: label values must stay few). */
  route(method: string, pattern: string): RouteMetrics {
    let byRoute = this.routes.get(method);
    if (!byRoute) this.routes.set(method, (byRoute = new Map<string, RouteMetrics>()));
    let metrics = byRoute.get(pattern);
    if (!metrics) byRoute.set(pattern, (metrics = new RouteMetrics(this.bounds, this.series, method, pattern)));
    return metrics;
  }
}

/** The pattern of the Express route that handled a request (`/tickets/:id/validate`), or UNMATCHED_ROUTE. */
export function routePattern(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? `${req.baseUrl}${path}` : UNMATCHED_ROUTE;
}

/** Counts every answered request of an Express app in `metrics`, labelled with its route pattern. */
export function httpMetricsMiddleware(metrics: HttpMetrics): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    metrics.inFlight += 1;
    // 'close' comes once per response, answered or aborted.
    res.once('close', () => (metrics.inFlight -= 1));
    res.once('finish', () => {
      metrics.route(req.method, routePattern(req)).observe(res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}

/** What trackQueueDepth reads of a queue: BullMQ's Queue has this shape. */
export interface CountableQueue {
  readonly name: string;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
}

const queueSources = new WeakMap<Registry, Map<string, CountableQueue>>();

/** How long a scrape waits for a queue's counts; a queue that does not answer in time is left out of that scrape. */
export const QUEUE_DEPTH_TIMEOUT_MS = 1_000;

/** `promise`, or a rejection when it has not settled within `ms`. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Adds a queue to `queue_depth{queue,state}` (waiting, delayed, active, failed), read from Redis
 * at scrape time only: nothing is counted on the way in or out of the queue.
 */
export function trackQueueDepth(registry: Registry, queue: CountableQueue): void {
  let sources = queueSources.get(registry);
  if (!sources) {
    const tracked = new Map<string, CountableQueue>();
    sources = tracked;
    queueSources.set(registry, tracked);
    new Gauge({
      name: 'queue_depth',
      help: 'Jobs in a queue by state (waiting includes prioritized), read at scrape time.',
      labelNames: ['queue', 'state'],
      registers: [registry],
      async collect() {
        this.reset();
        await Promise.all(
          [...tracked.values()].map(async (q) => {
            try {
              const counts = await within(q.getJobCounts('wait', 'prioritized', 'delayed', 'active', 'failed'), QUEUE_DEPTH_TIMEOUT_MS);
              this.set({ queue: q.name, state: 'waiting' }, (counts.wait ?? 0) + (counts.prioritized ?? 0));
              this.set({ queue: q.name, state: 'delayed' }, counts.delayed ?? 0);
              this.set({ queue: q.name, state: 'active' }, counts.active ?? 0);
              this.set({ queue: q.name, state: 'failed' }, counts.failed ?? 0);
            } catch {
              // Redis is down or slow: this queue is absent from this scrape (alert on absent(queue_depth)).
            }
          }),
        );
      },
    });
  }
  sources.set(queue.name, queue);
}

/** Get-or-create a counter, so two components of one process may share a registry. */
export function registeredCounter<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter<L>({ name, help, labelNames, registers: [registry] });
}

/**
 * Serves `GET /metrics` (Prometheus text) of `registry` on its own port, never the public one, on
 * `host` (HOST; default this machine only); anything else is 404. A port that cannot be bound is
 * logged and the process goes on serving: metrics are not worth an outage (the scrape target shows down).
 */
export function startMetricsServer(port: number, registry: Registry, logger: Logger, host: string = DEFAULT_HOST): Server {
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        logger.error({ err }, 'metrics collection failed');
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics collection failed\n');
      },
    );
  });
  server.on('error', (err) => logger.error({ err: err.message, host, port }, 'metrics port unavailable: /metrics is not served'));
  server.listen(port, host, () => logger.info(listeningAt(server, port), 'metrics listening'));
  return server;
}
