import http from 'node:http';
import { createLogger, createMetricsRegistry, Registry } from '@platform/core';
import { expectErrorBody, TEST_INTERNAL_SECRET, testRedisUrl, uniqueName } from '@platform/testing';
import { createApp } from './app';
import { createDatabase } from './database';
import { gatewayStores } from './keys.store';
import { closeRedis, createRedis, createSubscriber } from './redis';
import { ADMIN_TOKEN, allUpstreams, closeServer, DEAD_REDIS_URL, DEAD_URL, listen, startGateway } from './test/gateway';

// Contract section 12: /readyz fails only when the gateway can serve nothing (its database does
// not answer). Redis down degrades it (in-memory rate limits) and is shown, never decisive: with
// Redis gone every gateway pod would otherwise leave its Service while it still serves.

async function dependencyUp(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((line) => line.startsWith('platform_dependency_up{'));
}

test('Redis unreachable: /readyz is 200, and platform_dependency_up shows Redis down', async () => {
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  const gw = await startGateway({ redisUrl: DEAD_REDIS_URL, metrics });
  try {
    const res = await fetch(`${gw.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'down' } });
    expect(await dependencyUp(metrics)).toEqual(['platform_dependency_up{dependency="database"} 1', 'platform_dependency_up{dependency="redis"} 0']);
  } finally {
    await gw.close();
  }
});

test('the database unreachable: /readyz is 503 temporarily_unavailable', async () => {
  const logger = createLogger('gateway-readiness-test', 'silent');
  const db = createDatabase('postgresql://postgres@127.0.0.1:1/platform_gateway', { DATABASE_CONNECT_TIMEOUT_MS: 500, DATABASE_QUERY_TIMEOUT_MS: 500 });
  const redis = createRedis(testRedisUrl(), logger);
  const subscriber = createSubscriber(testRedisUrl(), logger);
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  const app = createApp({
    stores: gatewayStores(db),
    redis,
    subscriber,
    logger,
    adminToken: ADMIN_TOKEN,
    internalSecret: TEST_INTERNAL_SECRET,
    upstreams: allUpstreams(DEAD_URL),
    upstreamTimeoutMs: 1_000,
    redisPrefix: `test:${uniqueName('gw-ready')}:`,
    consoleDir: null,
    metrics,
  });
  const server = http.createServer(app);
  const url = await listen(server);
  try {
    const res = await fetch(`${url}/readyz`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expectErrorBody(await res.json(), 'temporarily_unavailable');
    expect(await dependencyUp(metrics)).toContain('platform_dependency_up{dependency="database"} 0');
  } finally {
    await closeServer(server);
    await app.close();
    await db.$disconnect();
    await Promise.all([closeRedis(subscriber), closeRedis(redis)]);
  }
});
