import { join } from 'node:path';
import { freePorts, killSpawned, prepareTestDatabase, processRedisUrl, spawnProcess, TEST_INTERNAL_SECRET, testDatabaseUrl, waitForHttp } from '@platform/testing';

// The real process (node dist/main.js): /metrics on METRICS_PORT, not on its API port; SIGTERM exits 0.
// A database of its own: the process's outbox relay must not take other test files' outbox rows.
const DATABASE_URL = testDatabaseUrl('warehouse_main');

beforeAll(async () => {
  await prepareTestDatabase(DATABASE_URL, join(__dirname, '..', 'prisma', 'migrations'));
});
afterAll(killSpawned);

test('main serves GET /metrics on METRICS_PORT only, and exits 0 on SIGTERM', async () => {
  const [port, metricsPort] = await freePorts(2);
  const proc = spawnProcess(join(__dirname, '..', 'dist', 'main.js'), {
    WAREHOUSE_PORT: String(port),
    METRICS_PORT: String(metricsPort),
    WAREHOUSE_DATABASE_URL: DATABASE_URL,
    REDIS_URL: processRedisUrl(),
    PLATFORM_INTERNAL_SECRET: TEST_INTERNAL_SECRET,
    LOG_LEVEL: 'warn',
  });
  await waitForHttp(`http://127.0.0.1:${port}/readyz`, { process: proc });
  expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);

  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(text).toContain('http_requests_total{method="GET",route="/healthz",status="200"} 1');
  expect(text).toMatch(/^queue_depth\{queue="webhooks-warehouse",state="waiting"\} \d+$/m);
  expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);

  const exit = await proc.kill('SIGTERM');
  expect({ ...exit, output: exit.code === 0 ? '' : proc.output() }).toEqual({ code: 0, signal: null, output: '' });
});
