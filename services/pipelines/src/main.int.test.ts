import { join } from 'node:path';
import { queueKeyPrefix } from '@platform/core';
import { deleteRedisKeys, exitReport, killSpawned, processRedisUrl, redisKeys, scrapeMetrics, spawnService, uniqueName } from '@platform/testing';

// The real API process (node dist/main.js): /metrics on METRICS_PORT, not on its API port; SIGTERM exits 0.
const queueName = uniqueName('runs-main');
// Its queues (runs and webhooks) under a prefix of its own, deleted afterwards.
const queuePrefix = uniqueName('pipelines-main-test');
afterAll(async () => {
  await killSpawned();
  await deleteRedisKeys(queuePrefix, processRedisUrl());
});

test('main serves GET /metrics on METRICS_PORT only, and exits 0 on SIGTERM', async () => {
  const main = await spawnService('pipelines', join(__dirname, '..'), {
    database: 'pipelines_main',
    env: { PIPELINES_RUNS_QUEUE: queueName, QUEUE_PREFIX: queuePrefix },
  });
  expect((await fetch(`${main.url}/healthz`)).status).toBe(200);
  expect((await fetch(`${main.url}/metrics`)).status).toBe(401);

  const text = await scrapeMetrics(main.metricsUrl);
  expect(text).toContain('http_requests_total{method="GET",route="/healthz",status="200"} 1');
  expect(text).toMatch(/^queue_depth\{queue="webhooks-pipelines",state="waiting"\} \d+$/m);
  // QUEUE_PREFIX is where the process's queues live.
  expect(
    (await redisKeys(queuePrefix, processRedisUrl())).some((key) => key.startsWith(`${queueKeyPrefix(queuePrefix, 'webhooks-pipelines')}:webhooks-pipelines:`)),
  ).toBe(true);

  await main.proc.kill('SIGTERM');
  expect(await exitReport(main.proc)).toEqual({ code: 0, signal: null, output: '' });
});
