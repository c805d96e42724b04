import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createLogger, createMetricsRegistry, startMetricsServer, type Registry } from '@platform/core';

/** The value of one sample line (`name{labels}`) in Prometheus text; undefined when absent. */
export function metricSample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** GETs a metrics port's `/metrics` URL; fails unless the answer is 200 in the Prometheus text format. */
export async function scrapeMetrics(url: string): Promise<string> {
  const res = await fetch(url);
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  if (res.status !== 200 || !/^text\/plain; version=0\.0\.4/.test(type))
    throw new Error(`GET ${url}: ${res.status} ${type}, not Prometheus text: ${text.slice(0, 200)}`);
  return text;
}

export interface TestMetrics {
  /** A fresh registry, given to the app under test. */
  registry: Registry;
  /** Its GET /metrics, served as a deployable's METRICS_PORT serves it. */
  url: string;
  scrape(): Promise<string>;
}

/** An app under test with its metrics on a port of its own; `close()` stops both. */
export type WithMetrics<App> = App & { metrics: TestMetrics };

/** Starts an app with a fresh metrics registry, which core's metrics server serves on a free loopback port. */
export async function withMetrics<App extends { close(): Promise<void> }>(start: (registry: Registry) => Promise<App>): Promise<WithMetrics<App>> {
  const registry = createMetricsRegistry();
  const server = startMetricsServer(0, registry, createLogger('metrics-test', 'silent'));
  await once(server, 'listening');
  const closeServer = () => new Promise<void>((resolve) => server.close(() => resolve()));
  const app = await start(registry).catch(async (err: unknown) => {
    await closeServer();
    throw err;
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  return {
    ...app,
    metrics: { registry, url, scrape: () => scrapeMetrics(url) },
    close: async () => {
      await closeServer();
      await app.close();
    },
  };
}
