import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Redis } from 'ioredis';
import { expectErrorBody, startTcpProxy, testRedisUrl, uniqueName, waitFor } from '@platform/testing';
import {
  IDEMPOTENCY_CLAIM_MARGIN_MS,
  IDEMPOTENCY_RECORD_TTL_MS,
  IdempotencyStore,
  idempotencyBytesUsed,
  idempotencyKeys,
  idempotencyScope,
  MAX_STORED_RESPONSE_BYTES,
} from './idempotency';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from './redis';
import {
  allUpstreams,
  closeServer,
  createTestKey,
  DEAD_REDIS_URL,
  DEAD_URL,
  listen,
  startEchoGateway,
  startGateway,
  type EchoGateway,
  type EchoUpstream,
  type Reply,
} from './test/gateway';

const UPSTREAM_TIMEOUT_MS = 2_000;

let gw: EchoGateway;

beforeAll(async () => {
  gw = await startEchoGateway({ upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS });
});
afterAll(() => gw.close());

/** How often the service ran a request carrying this Idempotency-Key. */
const runs = (key: string, echo: EchoUpstream = gw.upstream) => echo.received.filter((r) => r.headers['idempotency-key'] === key).length;

interface Send {
  token: string;
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
  base?: string;
}
const send = (method: string, path: string, { token, key, body, headers, base }: Send): Promise<Reply> =>
  gw.client.call(base ?? gw.url, method, path, { token, body, headers: { ...(key === undefined ? {} : { 'idempotency-key': key }), ...headers } });
const post = (path: string, options: Send) => send('POST', path, options);

const newKey = () => `key-${randomUUID()}`;

describe('replay (contract section 7)', () => {
  test('a retried POST gets the stored status, body and headers with idempotent-replayed, its own request id, and the service runs once', async () => {
    const { token } = await createTestKey(gw.stores);
    const key = newKey();
    const path = '/warehouse/v1/items?status=201&location=/warehouse/v1/items/abc';
    const first = await post(path, { token, key, body: { sku: 'a-1' }, headers: { 'x-request-id': 'first-try' } });
    const replay = await post(path, { token, key, body: { sku: 'a-1' }, headers: { 'x-request-id': 'second-try' } });

    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.headers.location).toBe('/warehouse/v1/items/abc');
    expect(first.headers['x-request-id']).toBe('first-try');
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(replay.body.headers['x-request-id']).toBe('first-try');
    // The service's headers are replayed; the gateway's are the replay's own.
    expect(replay.headers.location).toBe('/warehouse/v1/items/abc');
    expect(replay.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(replay.headers['x-upstream']).toBe('echo');
    // The gateway's own keep-alive (65 s), never the service's hop-by-hop one (node's default, 5 s).
    expect(replay.headers['keep-alive']).toBe('timeout=65');
    expect(replay.headers['x-request-id']).toBe('second-try');
    expect(replay.headers['platform-version']).toBe('2024-12-01');
    expect(replay.headers['x-ratelimit-limit']).toBe('600');
    expect(Number(replay.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']) - 1);
    expect(replay.headers['content-length']).toBe(String(Buffer.byteLength(first.text)));
    expect(runs(key)).toBe(1);
  });

  test('a 4xx answer of the service is stored and replayed too', async () => {
    const { token } = await createTestKey(gw.stores);
    const key = newKey();
    const first = await post('/warehouse/v1/items?status=409', { token, key, body: { sku: 'taken' } });
    const replay = await post('/warehouse/v1/items?status=409', { token, key, body: { sku: 'taken' } });
    expect([first.status, replay.status]).toEqual([409, 409]);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(runs(key)).toBe(1);
  });

  test('an empty body and a chunked body are keyed by their bytes and reach the service intact', async () => {
    const { token } = await createTestKey(gw.stores);
    const empty = newKey();
    const emptyFirst = await post(`/events/v0/tickets/${randomUUID()}/validate`, { token, key: empty });
    expect(emptyFirst.status).toBe(200);
    expect(emptyFirst.body.body_bytes).toBe(0);

    const chunked = newKey();
    const path = '/events/v0/events';
    const chunkedFirst = await chunkedPost(`${gw.url}${path}`, token, chunked, [Buffer.from('{"name":'), Buffer.from('"x"}')]);
    expect(chunkedFirst.status).toBe(200);
    expect(JSON.parse(chunkedFirst.body).body).toBe('{"name":"x"}');
    // The same bytes sent with a Content-Length are the same request.
    const replay = await post(path, { token, key: chunked, body: '{"name":"x"}' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(runs(chunked)).toBe(1);
  });

  test('a body of exactly 1 MiB is keyed; a chunked one past 1 MiB is 413 and claims nothing', async () => {
    const { token, workspaceId } = await createTestKey(gw.stores);
    const key = newKey();
    const big = Buffer.alloc(1024 * 1024, 0x61);
    const first = await post('/events/v0/events', { token, key, body: big, headers: { 'content-type': 'application/json' } });
    expect(first.status).toBe(200);
    expect(first.body.body_bytes).toBe(1024 * 1024);

    const tooLarge = newKey();
    const res = await chunkedPost(
      `${gw.url}/events/v0/events`,
      token,
      tooLarge,
      Array.from({ length: 5 }, () => Buffer.alloc(256 * 1024, 0x61)),
    );
    expect(res.status).toBe(413);
    expect(runs(tooLarge)).toBe(0);
    expect(await gw.redis.exists(recordKey(workspaceId, 'POST', '/events/v0/events', tooLarge))).toBe(0);
  });
});

describe('conflicts', () => {
  test('the same key with a different body: 409 reused_with_different_body, nothing runs', async () => {
    const { token } = await createTestKey(gw.stores);
    const key = newKey();
    expect((await post('/events/v0/events', { token, key, body: { name: 'a' } })).status).toBe(200);
    const res = await post('/events/v0/events', { token, key, body: { name: 'b' } });
    expect(res.status).toBe(409);
    const error = expectErrorBody(res.body, 'conflict');
    expect(error.errors).toEqual([{ in: 'header', field: 'Idempotency-Key', code: 'reused_with_different_body', message: expect.any(String) }]);
    expect(res.headers['x-ratelimit-limit']).toBe('400');
    expect(runs(key)).toBe(1);
  });

  test('the same key while the first request runs: 409 with Retry-After: 1; once it is done, the replay', async () => {
    const { token } = await createTestKey(gw.stores);
    const key = newKey();
    const path = '/pipelines/v3/pipelines/p1/runs?status=202&delay_ms=1500';
    const first = post(path, { token, key, body: { trigger: 'manual' } });
    await waitFor('the upstream to receive the request', () => runs(key) === 1);
    const during = await post(path, { token, key, body: { trigger: 'manual' } });
    expect(during.status).toBe(409);
    expect(during.headers['retry-after']).toBe('1');
    expect(expectErrorBody(during.body, 'conflict').errors?.[0]).toMatchObject({ in: 'header', field: 'Idempotency-Key', code: 'in_progress' });
    expect((await first).status).toBe(202);
    const after = await post(path, { token, key, body: { trigger: 'manual' } });
    expect(after.status).toBe(202);
    expect(after.headers['idempotent-replayed']).toBe('true');
    expect(runs(key)).toBe(1);
  });

  test('20 concurrent requests with one key run the service exactly once', async () => {
    const { token } = await createTestKey(gw.stores);
    const key = newKey();
    const path = '/warehouse/v1/items?status=201&delay_ms=150';
    const replies = await Promise.all(Array.from({ length: 20 }, () => post(path, { token, key, body: { sku: 'same' } })));
    expect(runs(key)).toBe(1);
    const original = replies.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
    const replayed = replies.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === 'true');
    const inFlight = replies.filter((r) => r.status === 409 && r.headers['retry-after'] === '1');
    expect(original).toHaveLength(1);
    expect(replayed.length + inFlight.length).toBe(19);
    for (const r of replayed) expect(r.text).toBe(original[0]!.text);
  });
});

describe('answers that are not stored', () => {
  test('a 5xx of the service is passed on but not stored: the retry runs again', async () => {
    const { token } = await createTestKey(gw.stores);
    const key = newKey();
    const failed = await post('/events/v0/events?status=500', { token, key, body: { name: 'x' } });
    expect(failed.status).toBe(500);
    expect(failed.body.method).toBe('POST');
    // The key's scope is the path without the query: the retry is the same request.
    const retried = await post('/events/v0/events?status=201', { token, key, body: { name: 'x' } });
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(runs(key)).toBe(2);
    expect((await post('/events/v0/events', { token, key, body: { name: 'x' } })).status).toBe(201);
    expect(runs(key)).toBe(2);
  });

  test('the gateway’s 503 for a service that is down is not stored, nor is the claim left behind', async () => {
    const down = await startGateway({ upstreams: allUpstreams(DEAD_URL) });
    try {
      const { token, workspaceId } = await createTestKey(down.stores);
      const key = newKey();
      for (let i = 0; i < 2; i++) {
        const res = await post('/events/v0/events', { base: down.url, token, key, body: { name: 'x' } });
        expect(res.status).toBe(503);
        expectErrorBody(res.body, 'temporarily_unavailable');
      }
      expect(await down.redis.exists(recordKey(workspaceId, 'POST', '/events/v0/events', key, down.redisPrefix))).toBe(0);
    } finally {
      await down.close();
    }
  });

  test('the gateway’s 503 for a service slower than the timeout is not stored: the retry runs again', async () => {
    const impatient = await startGateway({ upstreams: allUpstreams(gw.upstream.url), upstreamTimeoutMs: 300 });
    try {
      const { token } = await createTestKey(impatient.stores);
      const key = newKey();
      // The service would answer only after a minute: the gateway's 503 is its timeout, however late its timers run.
      const slow = await post('/events/v0/events?delay_ms=60000', { base: impatient.url, token, key, body: { name: 'x' } });
      expect(slow.status).toBe(503);
      const retried = await post('/events/v0/events', { base: impatient.url, token, key, body: { name: 'x' } });
      expect(retried.status).toBe(200);
      expect(retried.headers['idempotent-replayed']).toBeUndefined();
      expect(runs(key)).toBe(2);
    } finally {
      await impatient.close();
    }
  });

  test('a client that leaves mid-request leaves no stuck claim: the service’s answer is stored and its retry gets it', async () => {
    const { token } = await createTestKey(gw.stores);
    const key = newKey();
    const path = '/events/v0/events?status=201&delay_ms=300';
    // The client leaves once the service has the request, before it answers.
    await abandonedPost(`${gw.url}${path}`, token, key, '{"name":"lost"}', () =>
      waitFor('the upstream to receive the request', () => runs(key) === 1, undefined, 20),
    );
    // Until the service's answer is stored, a retry is refused as in progress (and does not run).
    const retried = await waitFor('the stored answer', async () => {
      const reply = await post(path, { token, key, body: '{"name":"lost"}' });
      return reply.status !== 409 && reply;
    });
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(runs(key)).toBe(1);
  });

  test('an answer over 1 MiB is streamed whole and not stored: the retry runs again', async () => {
    let calls = 0;
    // Contract section 7: no client can make the platform store more than 1 MiB per key.
    const big = Buffer.alloc(1024 * 1024 + 1, 0x61);
    const service = http.createServer((req, res) => {
      calls++;
      req.resume();
      req.on('end', () => {
        res.writeHead(201, { 'content-type': 'application/octet-stream', 'content-length': big.length });
        res.end(big);
      });
    });
    const large = await startGateway({ upstreams: allUpstreams(await listen(service)) });
    try {
      const { token } = await createTestKey(large.stores);
      const key = newKey();
      for (let i = 0; i < 2; i++) {
        const res = await post('/warehouse/v1/items', { base: large.url, token, key, body: {} });
        expect(res.status).toBe(201);
        expect(res.headers['content-length']).toBe(String(big.length));
        expect(res.text.length).toBe(big.length);
        expect(res.headers['idempotent-replayed']).toBeUndefined();
      }
      expect(calls).toBe(2);
    } finally {
      await large.close();
      await closeServer(service);
    }
  }, 90_000);
});

describe('scope: workspace + method + path + key', () => {
  test('two spellings of one resource (upper-case id, trailing slash) share one scope: the second is a replay, not a second run or a 409', async () => {
    const { token } = await createTestKey(gw.stores);
    const key = newKey();
    const id = randomUUID();
    const body = { gate: 'north' };
    const first = await post(`/events/v0/tickets/${id.toUpperCase()}/validate/`, { token, key, body });
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const second = await post(`/events/v0/tickets/${id}/validate`, { token, key, body });
    expect(second.status).toBe(first.status);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(runs(key)).toBe(1);
  });

  test('another workspace with the same key runs separately; so does another path', async () => {
    const a = await createTestKey(gw.stores);
    const b = await createTestKey(gw.stores);
    const key = newKey();
    const body = { name: 'x' };
    expect((await post('/events/v0/events', { token: a.token, key, body })).headers['idempotent-replayed']).toBeUndefined();
    expect((await post('/events/v0/events', { token: b.token, key, body })).headers['idempotent-replayed']).toBeUndefined();
    expect((await post(`/events/v0/events/${randomUUID()}/tickets`, { token: a.token, key, body })).headers['idempotent-replayed']).toBeUndefined();
    expect(runs(key)).toBe(3);
    expect((await post('/events/v0/events', { token: b.token, key, body })).headers['idempotent-replayed']).toBe('true');
    expect(runs(key)).toBe(3);
  });

  test('another method on the same path runs separately (PATCH then POST on /items/{id} share nothing)', async () => {
    const { token, workspaceId } = await createTestKey(gw.stores);
    const key = newKey();
    const path = `/warehouse/v1/items/${randomUUID()}`;
    expect((await send('PATCH', path, { token, key, body: { name: 'x' } })).status).toBe(200);
    // No contract route takes both methods on one path, so the record key shows the separation.
    expect(await gw.redis.exists(recordKey(workspaceId, 'PATCH', path, key))).toBe(1);
    expect(await gw.redis.exists(recordKey(workspaceId, 'POST', path, key))).toBe(0);
  });

  test('two API keys of one workspace share the key', async () => {
    const first = await createTestKey(gw.stores);
    const second = await createTestKey(gw.stores, { workspaceId: first.workspaceId });
    const key = newKey();
    const original = await post('/warehouse/v1/locations?status=201', { token: first.token, key, body: { name: 'Main', code: 'm' } });
    const replay = await post('/warehouse/v1/locations?status=201', { token: second.token, key, body: { name: 'Main', code: 'm' } });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(original.text);
    expect(runs(key)).toBe(1);
  });

  test('a running claim lives for the upstream timeout plus a margin; the finished record for 24 h', async () => {
    const { token, workspaceId } = await createTestKey(gw.stores);
    const key = newKey();
    const record = recordKey(workspaceId, 'POST', '/events/v0/events', key);
    const pending = post('/events/v0/events?delay_ms=1500', { token, key, body: {} });
    await waitFor('the upstream to receive the request', () => runs(key) === 1);
    const claimTtl = await gw.redis.pttl(record);
    expect(claimTtl).toBeGreaterThan(UPSTREAM_TIMEOUT_MS);
    expect(claimTtl).toBeLessThanOrEqual(UPSTREAM_TIMEOUT_MS + IDEMPOTENCY_CLAIM_MARGIN_MS);
    await pending;
    expect(await gw.redis.pttl(record)).toBeGreaterThan(IDEMPOTENCY_RECORD_TTL_MS - 60_000);
  });
});

describe('the header itself', () => {
  test('empty, longer than 255 or not visible ASCII: 400 naming the header; nothing runs', async () => {
    const { token } = await createTestKey(gw.stores);
    const before = gw.upstream.received.length;
    const cases: [string, string][] = [
      ['', 'invalid_format'],
      ['k'.repeat(256), 'too_long'],
      ['with space', 'invalid_format'],
      ['tab\there', 'invalid_format'],
    ];
    for (const [value, code] of cases) {
      const res = await post('/events/v0/events', { token, key: value, body: {} });
      expect(res.status).toBe(400);
      expect(expectErrorBody(res.body, 'invalid_request').errors).toEqual([{ in: 'header', field: 'Idempotency-Key', code, message: expect.any(String) }]);
    }
    const nonAscii = await rawPost(`${gw.url}/events/v0/events`, {
      authorization: `Bearer ${token}`,
      'idempotency-key': Buffer.from('clé', 'utf8').toString('latin1'),
    });
    expect(nonAscii.status).toBe(400);
    expect(nonAscii.body.error.errors[0]).toMatchObject({ in: 'header', field: 'Idempotency-Key', code: 'invalid_format' });
    expect(gw.upstream.received.length).toBe(before);
    expect((await post('/events/v0/events', { token, key: '~'.repeat(255), body: {} })).status).toBe(200);
  });

  test('a GET ignores the header, even an invalid one', async () => {
    const { token } = await createTestKey(gw.stores);
    const key = newKey();
    const path = `/events/v0/events/${randomUUID()}`;
    for (let i = 0; i < 2; i++) {
      const res = await send('GET', path, { token, key });
      expect(res.status).toBe(200);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    }
    expect(runs(key)).toBe(2);
    expect((await send('GET', path, { token, key: '' })).status).toBe(200);
  });

  test('replays and 409s count in the rate limit like any request', async () => {
    const limited = await startGateway({ upstreams: allUpstreams(gw.upstream.url), limits: { events: 3 } });
    try {
      const { token } = await createTestKey(limited.stores);
      const key = newKey();
      const call = (body: unknown) => post('/events/v0/events', { base: limited.url, token, key, body });
      const replies = [await call({ name: 'a' }), await call({ name: 'a' }), await call({ name: 'b' }), await call({ name: 'a' })];
      expect(replies.map((r) => r.status)).toEqual([200, 200, 409, 429]);
      expect(replies.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    } finally {
      await limited.close();
    }
  });
});

describe('Redis unreachable', () => {
  test('a request with a key gets a quick 503 and does not run; one without a key is served', async () => {
    const noRedis = await startGateway({ upstreams: allUpstreams(gw.upstream.url), redisUrl: DEAD_REDIS_URL });
    try {
      const { token } = await createTestKey(noRedis.stores);
      const key = newKey();
      // Redis never comes (nothing listens there): any answer at all is the gateway giving up on its own.
      const keyed = await post('/events/v0/events', { base: noRedis.url, token, key, body: { name: 'x' } });
      expect(keyed.status).toBe(503);
      expect(keyed.headers['retry-after']).toBe('1');
      expectErrorBody(keyed.body, 'temporarily_unavailable');
      expect(runs(key)).toBe(0);
      const plain = await post('/events/v0/events', { base: noRedis.url, token, body: { name: 'x' } });
      expect(plain.status).toBe(200);
      expect(plain.headers['x-ratelimit-limit']).toBe('400');
    } finally {
      await noRedis.close();
    }
  });

  test('a Redis that does not answer: the key’s request gets 503 within the command timeout, never a hang', async () => {
    const redisUrl = new URL(testRedisUrl());
    const relay = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
    const slowRedis = await startGateway({
      upstreams: allUpstreams(gw.upstream.url),
      redisUrl: `redis://127.0.0.1:${relay.port}`,
      redisCommandTimeoutMs: DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    });
    try {
      const { token } = await createTestKey(slowRedis.stores);
      await waitFor('Redis through the relay to be ready', () => slowRedis.redis.status === 'ready', 60_000, 20);
      relay.setMode('blackhole');
      const key = newKey();
      // Answered while Redis is still silent (the relay forwards again only in `finally`): the command
      // timeout ended the wait, not Redis; a hang would run into the test's timeout instead.
      const keyed = await post('/events/v0/events', { base: slowRedis.url, token, key, body: { name: 'x' } });
      expect(keyed.status).toBe(503);
      expect(runs(key)).toBe(0);
      expect((await post('/events/v0/events', { base: slowRedis.url, token, body: { name: 'x' } })).status).toBe(200);
    } finally {
      relay.setMode('forward');
      await slowRedis.close();
      await relay.close();
    }
  });
});

describe('Redis away between the claim and the record (contract sections 7 and 17)', () => {
  test('an answer that ran is stored once Redis is back: the retry replays it, the service ran once', async () => {
    const redisUrl = new URL(testRedisUrl());
    const relay = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
    let ran = 0;
    // The service runs the request while the gateway loses Redis: its claim went through, its record cannot.
    const service = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        ran++;
        relay.setMode('refuse');
        relay.cut();
        const body = JSON.stringify({ id: `created-${ran}` });
        res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    const upstream = await listen(service);
    const gateway = await startGateway({ upstreams: allUpstreams(upstream), redisUrl: `redis://127.0.0.1:${relay.port}` });
    try {
      const { token } = await createTestKey(gateway.stores);
      await waitFor('Redis through the relay to be ready', () => gateway.redis.status === 'ready', 60_000, 20);
      const key = newKey();
      const first = await post('/events/v0/events', { base: gateway.url, token, key, body: { name: 'x' } });
      expect([first.status, first.body]).toEqual([201, { id: 'created-1' }]);
      expect(ran).toBe(1);

      relay.setMode('forward');
      const probe = new Redis(testRedisUrl());
      try {
        const recordKey = await waitFor(
          'the record written once Redis is back',
          async () => {
            const keys = await probe.keys(`${gateway.redisPrefix}idem:*`);
            for (const k of keys) if ((await probe.hget(k, 'state')) === 'done') return k;
            return undefined;
          },
          60_000,
          100,
        );
        expect(await probe.hget(recordKey, 'status')).toBe('201');
      } finally {
        probe.disconnect();
      }
      const retry = await post('/events/v0/events', { base: gateway.url, token, key, body: { name: 'x' } });
      expect([retry.status, retry.body, retry.headers['idempotent-replayed']]).toEqual([201, { id: 'created-1' }, 'true']);
      expect(ran).toBe(1);
    } finally {
      relay.setMode('forward');
      await gateway.close();
      await relay.close();
      await closeServer(service);
    }
  });
});

describe('the Lua record on Redis', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = new Redis(testRedisUrl());
    await redis.ping();
  });
  afterAll(async () => {
    await redis.quit();
  });

  /** A scope of a fresh workspace, and a limit no test here reaches. */
  const k = { workspaceId: randomUUID(), id: 'k' };
  const LIMIT = 1024 ** 3;

  test('a claim whose holder died expires, and the late holder cannot overwrite the new claim', async () => {
    // Long enough that the second claim surely comes before the first expires, even on a busy machine.
    const store = new IdempotencyStore(redis, `test:${uniqueName('idem')}:`, { claimTtlMs: 3_000 });
    const first = await store.claim(k, 'hash', LIMIT);
    expect(first.state).toBe('claimed');
    expect((await store.claim(k, 'hash', LIMIT)).state).toBe('running');
    const second = await waitFor('the dead holder’s claim to expire', async () => {
      const outcome = await store.claim(k, 'hash', LIMIT);
      return outcome.state !== 'running' && outcome;
    });
    expect(second.state).toBe('claimed');
    if (first.state !== 'claimed' || second.state !== 'claimed') throw new Error('unreachable');
    const response = { status: 201, headers: { location: '/x' }, body: Buffer.from([0xff, 0x00, 0x7b]) };
    expect(await store.complete(first.claim, response)).toBe(false);
    await store.release(first.claim);
    expect((await store.claim(k, 'hash', LIMIT)).state).toBe('running');
    expect(await store.complete(second.claim, response)).toBe(true);
    // Raw bytes survive the round trip.
    expect(await store.claim(k, 'hash', LIMIT)).toEqual({ state: 'done', response });
    expect((await store.claim(k, 'other', LIMIT)).state).toBe('mismatch');
  });

  test('releasing frees the key for the next request', async () => {
    const store = new IdempotencyStore(redis, `test:${uniqueName('idem')}:`, { claimTtlMs: 10_000 });
    const first = await store.claim(k, 'hash', LIMIT);
    if (first.state !== 'claimed') throw new Error('not claimed');
    await store.release(first.claim);
    expect((await store.claim(k, 'hash', LIMIT)).state).toBe('claimed');
  });

  const answerOf = (bytes: number) => ({ status: 201, headers: { 'content-type': 'application/json' }, body: Buffer.alloc(bytes, 0x61) });

  test('a running claim holds 1 MiB of the quota until it is stored (then its real size counts), released, or expires', async () => {
    const prefix = `test:${uniqueName('idem')}:`;
    // Long enough that the claims below surely come before the first ones expire, even on a busy machine.
    const claimTtlMs = 3_000;
    const store = new IdempotencyStore(redis, prefix, { claimTtlMs });
    const workspaceId = randomUUID();
    const scope = (id: string) => ({ workspaceId, id });
    const limit = MAX_STORED_RESPONSE_BYTES + 1;

    // 0 stored, 0 reserved: admitted; then 1 MiB reserved fills the limit but for 1 byte: one more.
    const first = await store.claim(scope('a'), 'h', limit);
    const second = await store.claim(scope('b'), 'h', limit);
    expect([first.state, second.state]).toEqual(['claimed', 'claimed']);
    const third = await store.claim(scope('c'), 'h', limit);
    expect(third).toEqual({ state: 'quota', retryAfterSeconds: 1 });
    if (first.state !== 'claimed' || second.state !== 'claimed') throw new Error('unreachable');

    // A release gives its reservation back.
    await store.release(second.claim);
    const fourth = await store.claim(scope('d'), 'h', limit);
    expect(fourth.state).toBe('claimed');

    // A stored answer counts its real size and ends its reservation: 100 bytes + 2 x 1 MiB > limit.
    expect(await store.complete(first.claim, answerOf(100))).toBe(true);
    const used = await idempotencyBytesUsed(redis, prefix, workspaceId);
    expect(used).toBe(3 + JSON.stringify({ 'content-type': 'application/json' }).length + 100);
    expect((await store.claim(scope('e'), 'h', limit)).state).toBe('quota');

    // The claim of a gateway that died is never settled: its reservation ends with the claim's TTL.
    const after = await waitFor(
      'the unsettled claim to expire',
      async () => {
        const outcome = await store.claim(scope('f'), 'h', limit);
        return outcome.state === 'claimed' ? outcome : undefined;
      },
      undefined,
      50,
    );
    expect(after.state).toBe('claimed');
    // A stored answer, unlike a claim, counts until its record expires (24 h).
    expect(await idempotencyBytesUsed(redis, prefix, workspaceId)).toBe(used);
  });

  test('the stored count reaching the limit refuses with the seconds until the oldest stored answer expires', async () => {
    const prefix = `test:${uniqueName('idem')}:`;
    const store = new IdempotencyStore(redis, prefix, { claimTtlMs: 10_000, recordTtlMs: 90_000 });
    const workspaceId = randomUUID();
    const claimed = await store.claim({ workspaceId, id: 'a' }, 'h', 50);
    if (claimed.state !== 'claimed') throw new Error('not claimed');
    await store.complete(claimed.claim, answerOf(100));
    const refused = await store.claim({ workspaceId, id: 'b' }, 'h', 50);
    expect(refused.state).toBe('quota');
    const retryAfter = refused.state === 'quota' ? refused.retryAfterSeconds : 0;
    expect(retryAfter).toBeGreaterThan(60);
    expect(retryAfter).toBeLessThanOrEqual(90);
    // The same key again is its replay, whatever the quota.
    expect((await store.claim({ workspaceId, id: 'a' }, 'h', 50)).state).toBe('done');
  });

  test('two platforms on one Redis (two gateway prefixes) neither read nor count each other’s answers', async () => {
    const workspaceId = randomUUID();
    const [first, second] = [`test:${uniqueName('idem')}:`, `test:${uniqueName('idem')}:`].map(
      (prefix) => [prefix, new IdempotencyStore(redis, prefix, { claimTtlMs: 10_000 })] as const,
    ) as [[string, IdempotencyStore], [string, IdempotencyStore]];
    const claimed = await first[1].claim({ workspaceId, id: 'a' }, 'h', 50);
    if (claimed.state !== 'claimed') throw new Error('not claimed');
    await first[1].complete(claimed.claim, answerOf(100));
    expect((await first[1].claim({ workspaceId, id: 'b' }, 'h', 50)).state).toBe('quota');
    expect(await idempotencyBytesUsed(redis, second[0], workspaceId)).toBe(0);
    expect((await second[1].claim({ workspaceId, id: 'a' }, 'h', 50)).state).toBe('claimed');
    expect(await idempotencyBytesUsed(redis, first[0], workspaceId)).toBeGreaterThan(100);
  });
});

function recordKey(workspaceId: string, method: string, path: string, key: string, prefix = gw.redisPrefix): string {
  return idempotencyKeys(prefix, workspaceId).record(idempotencyScope(workspaceId, method, path, key).id);
}

/** POST with Transfer-Encoding: chunked (undici always sends a Content-Length for buffers). */
function chunkedPost(url: string, token: string, key: string, chunks: Buffer[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(parts).toString('utf8') }));
      },
    );
    req.on('error', reject);
    let i = 0;
    const next = (): void => {
      if (i === chunks.length) return void req.end();
      req.write(chunks[i++], () => setImmediate(next));
    };
    next();
  });
}

/** node:http, which sends header bytes as given (latin1), where undici refuses non-ASCII. */
function rawPost(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(parts).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends a whole request, then hangs up once `leave` resolves, without reading the answer (the scanner that lost it). */
function abandonedPost(url: string, token: string, key: string, body: string, leave: () => Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request(url, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.end(body);
    void leave().finally(() => req.destroy());
  });
}
