import { randomUUID } from 'node:crypto';
import { startTcpProxy, testRedisUrl, uniqueName, waitFor } from '@platform/testing';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from './redis';
import { allUpstreams, createTestKey, DEAD_REDIS_URL, httpClient, startEchoUpstream, startGateway, type EchoUpstream, type HttpClient } from './test/gateway';

let upstream: EchoUpstream;
let client: HttpClient;

beforeAll(async () => {
  upstream = await startEchoUpstream();
  client = httpClient();
});
afterAll(async () => {
  await client.close();
  await upstream.close();
});

const path = () => `/events/v0/events/${randomUUID()}`;

test('two gateway instances on one Redis together accept exactly the limit', async () => {
  const options = { upstreams: allUpstreams(upstream.url), redisPrefix: `test:${uniqueName('pair')}:`, limits: { events: 10 } };
  const a = await startGateway(options);
  const b = await startGateway(options);
  try {
    const { token } = await createTestKey(a.stores);
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => client.call(i % 2 ? a.url : b.url, 'GET', path(), { token })));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
    // Both instances served some of the accepted ones, counted in one place.
    expect(new Set(replies.filter((r) => r.status === 200).map((r) => r.headers['x-ratelimit-remaining']))).toEqual(
      new Set(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']),
    );
    expect(a.app.state().rateLimiter.mode).toBe('redis');
  } finally {
    await a.close();
    await b.close();
  }
});

test('with Redis unreachable requests still succeed, limited per instance in memory', async () => {
  const gw = await startGateway({ upstreams: allUpstreams(upstream.url), redisUrl: DEAD_REDIS_URL, limits: { events: 3 } });
  try {
    const { token } = await createTestKey(gw.stores);
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await client.call(gw.url, 'GET', path(), { token }));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(replies.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    expect(replies[3]!.headers['retry-after']).toEqual(expect.any(String));
    expect(gw.app.state().rateLimiter).toMatchObject({ mode: 'memory' });
    // Unauthenticated requests are limited the same way.
    expect((await client.call(gw.url, 'GET', path())).status).toBe(401);
    // Still ready: the gateway serves without Redis (readiness follows the database only, contract section 12).
    expect((await client.call(gw.url, 'GET', '/readyz')).status).toBe(200);
  } finally {
    await gw.close();
  }
});

test('Redis going away and coming back: served from memory meanwhile, then Redis counts again', async () => {
  const redisUrl = new URL(testRedisUrl());
  const relay = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
  const gw = await startGateway({ upstreams: allUpstreams(upstream.url), redisUrl: `redis://127.0.0.1:${relay.port}`, limits: { events: 50 } });
  try {
    const { token, keyId } = await createTestKey(gw.stores);
    await waitFor('Redis to be ready', () => gw.redis.status === 'ready');
    expect((await client.call(gw.url, 'GET', path(), { token })).status).toBe(200);
    expect(gw.app.state().rateLimiter.mode).toBe('redis');

    relay.setMode('refuse');
    relay.cut();
    const during = await client.call(gw.url, 'GET', path(), { token });
    expect(during.status).toBe(200);
    expect(gw.app.state().rateLimiter.mode).toBe('memory');

    relay.setMode('forward');
    await waitFor('Redis to count again', () => gw.app.state().rateLimiter.mode === 'redis', 60_000, 20);
    expect((await client.call(gw.url, 'GET', path(), { token })).status).toBe(200);
    // Redis holds every accepted request, the one accepted from memory too (contract section 17).
    expect(await gw.redis.zcard(`${gw.redisPrefix}rl:key:${keyId}:events`)).toBe(3);
  } finally {
    await gw.close();
    await relay.close();
  }
});

test('a Redis that stops answering is given up after the command timeout, never a hang or a 5xx', async () => {
  const redisUrl = new URL(testRedisUrl());
  const relay = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
  const gw = await startGateway({
    upstreams: allUpstreams(upstream.url),
    redisUrl: `redis://127.0.0.1:${relay.port}`,
    redisCommandTimeoutMs: DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
  });
  try {
    const { token } = await createTestKey(gw.stores);
    await waitFor('Redis to be ready', () => gw.redis.status === 'ready');
    expect((await client.call(gw.url, 'GET', path(), { token })).status).toBe(200);
    relay.setMode('blackhole');
    // Served while Redis is still silent (the relay forwards again only afterwards): no request waited for it.
    const replies = await Promise.all(Array.from({ length: 5 }, () => client.call(gw.url, 'GET', path(), { token })));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(gw.app.state().rateLimiter.mode).toBe('memory');
    relay.setMode('forward');
  } finally {
    await gw.close();
    await relay.close();
  }
});
