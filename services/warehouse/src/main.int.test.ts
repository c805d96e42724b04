import { join } from 'node:path';
import { exitReport, killSpawned, scrapeMetrics, spawnService } from '@platform/testing';

// The real process (node dist/main.js): /metrics on METRICS_PORT, not on its API port; SIGTERM exits 0.
afterAll(killSpawned);

test('main serves GET /metrics on METRICS_PORT only, and exits 0 on SIGTERM', async () => {
  const main = await spawnService('warehouse', join(__dirname, '..'), { database: 'warehouse_main' });
  expect((await fetch(`${main.url}/healthz`)).status).toBe(200);
  expect((await fetch(`${main.url}/metrics`)).status).toBe(401);

  const text = await scrapeMetrics(main.metricsUrl);
  expect(text).toContain('http_requests_total{method="GET",route="/healthz",status="200"} 1');
  expect(text).toMatch(/^queue_depth\{queue="webhooks-warehouse",state="waiting"\} \d+$/m);
  expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);

  await main.proc.kill('SIGTERM');
  expect(await exitReport(main.proc)).toEqual({ code: 0, signal: null, output: '' });
});
