import { Router } from 'express';
import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { createLogger } from '../process/logger';
import { createMetricsRegistry, HttpMetrics, Registry } from '../observability/metrics';
import { DEPENDENCY_UP_METRIC, healthEndpoints, Readiness } from './readiness';
import { createServiceApp } from './service-app';

const silent = createLogger('readiness-test', 'silent');
const up = async () => undefined;
const refused = async () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:1'));
const hanging = () => new Promise<never>(() => undefined);

async function dependencySamples(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((line) => line.startsWith(`${DEPENDENCY_UP_METRIC}{`));
}

function serviceApp(ready: ConstructorParameters<typeof Readiness>[0], registry = createMetricsRegistry({ defaultMetrics: false })) {
  return createServiceApp({
    service: 'events',
    logger: silent,
    internalSecret: 'readiness-test-secret-0123456789',
    routes: Router(),
    ready,
    metrics: new HttpMetrics(registry),
  });
}

describe('GET /readyz of a service', () => {
  test('Redis down: still ready (200), Redis shown down in the body and in platform_dependency_up', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const res = await request(serviceApp({ database: up, redis: refused }, registry)).get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'down' } });
    expect(await dependencySamples(registry)).toEqual([`${DEPENDENCY_UP_METRIC}{dependency="database"} 1`, `${DEPENDENCY_UP_METRIC}{dependency="redis"} 0`]);
  });

  test('everything up: 200 with every check ok', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const res = await request(serviceApp({ database: up, redis: up }, registry)).get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok' } });
    expect(await dependencySamples(registry)).toEqual([`${DEPENDENCY_UP_METRIC}{dependency="database"} 1`, `${DEPENDENCY_UP_METRIC}{dependency="redis"} 1`]);
  });

  test('the database down: 503 temporarily_unavailable (the process can serve nothing)', async () => {
    for (const database of [refused, hanging]) {
      const res = await request(serviceApp({ database, redis: up })).get('/readyz');
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body.error).toMatchObject({ code: 'temporarily_unavailable', message: 'Not ready: the database does not answer.' });
    }
  });
});

describe('healthEndpoints of a worker', () => {
  test('/healthz 200; /readyz 200 with its checks, 503 unavailable while the database does not answer; other paths 404', async () => {
    expect((await request(healthEndpoints(new Readiness({ database: up }))).get('/healthz')).body).toEqual({ status: 'ok' });
    const ready = await request(healthEndpoints(new Readiness({ database: up, redis: refused }))).get('/readyz');
    expect([ready.status, ready.body]).toEqual([200, { status: 'ready', checks: { database: 'ok', redis: 'down' } }]);
    const unavailable = await request(healthEndpoints(new Readiness({ database: refused, redis: up }))).get('/readyz');
    expect([unavailable.status, unavailable.body]).toEqual([503, { status: 'unavailable', checks: { database: 'down', redis: 'ok' } }]);
    const unknown = await request(healthEndpoints(new Readiness({ database: up }))).get('/metrics');
    expect([unknown.status, unknown.body]).toEqual([404, { status: 'not_found' }]);
  });
});

describe('Readiness', () => {
  test('a check that does not answer within the timeout counts as down', async () => {
    const readiness = new Readiness({ database: up, redis: hanging }, { timeoutMs: 50 });
    expect(await readiness.check()).toEqual({ ready: true, checks: { database: 'ok', redis: 'down' } });
  });

  test('without a Redis check, only the database is shown', async () => {
    expect(await new Readiness({ database: up }).require()).toEqual({ status: 'ready', checks: { database: 'ok' } });
  });

  test('logs a dependency going down and coming back once each, not on every probe', async () => {
    const lines: Array<{ msg: string; dependency: string }> = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    let redisUp = true;
    const readiness = new Readiness({ database: up, redis: () => (redisUp ? up() : refused()) }, { logger });
    await readiness.check();
    redisUp = false;
    await readiness.check();
    await readiness.check();
    redisUp = true;
    await readiness.check();
    expect(lines.map((l) => [l.dependency, l.msg])).toEqual([
      ['redis', 'redis does not answer'],
      ['redis', 'redis answers again'],
    ]);
  });
});
