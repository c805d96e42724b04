import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { DEFAULT_SERVICE_QUOTA_LIMITS, INTERNAL_USAGE_PATH } from '@platform/core';
import { expectErrorBody } from '@platform/testing';
import { allUpstreams, createTestKey, DEAD_URL, startEchoGateway, startEchoUpstream, startGateway, type EchoGateway, type HttpClient } from './test/gateway';

let gw: EchoGateway;

beforeAll(async () => {
  gw = await startEchoGateway();
});
afterAll(() => gw.close());

const get = (path: string, options?: Parameters<HttpClient['call']>[3]) => gw.client.call(gw.url, 'GET', path, options);
const post = (path: string, options?: Parameters<HttpClient['call']>[3]) => gw.client.call(gw.url, 'POST', path, options);

describe('responses the gateway makes itself', () => {
  test('a path outside every prefix is 404 with the contract error body, request id and version', async () => {
    const res = await get('/nothing/here', { headers: { 'x-request-id': 'req-abc' } });
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-request-id']).toBe('req-abc');
    expect(res.headers['platform-version']).toBe('2024-12-01');
    expect(expectErrorBody(res.body, 'not_found').request_id).toBe('req-abc');
  });

  test('an unusable x-request-id is replaced by a generated one', async () => {
    const res = await get('/healthz', { headers: { 'x-request-id': 'x'.repeat(129) } });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('/healthz and /readyz are the gateway’s own', async () => {
    const health = await get('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    expect(health.headers['platform-version']).toBe('2024-12-01');
    const ready = await get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok' } });
  });

  test('GET / is an index of the platform’s addresses, each of which answers (issue 29)', async () => {
    const res = await get('/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      apis: { events: '/events/v0', warehouse: '/warehouse/v1', pipelines: '/pipelines/v3', admin: '/admin/v1' },
      docs: '/docs',
      openapi: { events: '/docs/events.json', warehouse: '/docs/warehouse.json', pipelines: '/docs/pipelines.json', admin: '/docs/admin.json' },
      console: '/console',
      health: '/healthz',
      ready: '/readyz',
    });
    expect((await get(res.body.health)).status).toBe(200);
    expect((await get(res.body.ready)).status).toBe(200);
    // Only GET and HEAD: anything else at / is the usual 404.
    expect((await post('/', { body: {} })).status).toBe(404);
  });

  test('a service’s own /healthz and its internal usage route are not proxied (404, counted in the service bucket)', async () => {
    const { token } = await createTestKey(gw.stores);
    const before = gw.upstream.received.length;
    for (const path of [
      '/events/v0/healthz',
      '/events/v0/readyz',
      '/events/v0/metrics',
      '/warehouse/v1/healthz',
      `/events/v0${INTERNAL_USAGE_PATH}`,
      `/warehouse/v1${INTERNAL_USAGE_PATH}`,
    ]) {
      const res = await get(path, { token });
      expect(res.status).toBe(404);
      expectErrorBody(res.body, 'not_found');
      expect(res.headers['x-ratelimit-limit']).toBe(path.startsWith('/events') ? '400' : '600');
    }
    expect(gw.upstream.received.length).toBe(before);
  });
});

describe('order of checks (contract section 4)', () => {
  test('401 before 404 before version 400 before scope 403 before 429', async () => {
    const limited = await startGateway({ upstreams: allUpstreams(gw.upstream.url), limits: { events: 3 } });
    try {
      const { token } = await createTestKey(limited.stores, { scopes: ['events:read'] });
      const call = (method: string, path: string, options: Parameters<HttpClient['call']>[3]) => gw.client.call(limited.url, method, path, options);
      const badVersion = { 'platform-version': '2023-01-01' };

      // Everything wrong: no token wins.
      expectErrorBody((await call('GET', '/events/v0/nope', { headers: badVersion })).body, 'unauthorized');
      // With a token: the unknown route (counted: 1 of 3).
      const unknown = await call('GET', '/events/v0/nope', { token, headers: badVersion });
      expect(unknown.status).toBe(404);
      expect(unknown.headers['x-ratelimit-remaining']).toBe('2');
      // A known route with a bad version and a missing scope: the version (2 of 3).
      const version = await call('POST', '/events/v0/events', { token, headers: badVersion, body: {} });
      expect(version.status).toBe(400);
      // The missing scope (3 of 3).
      const scope = await call('POST', '/events/v0/events', { token, body: {} });
      expect(scope.status).toBe(403);
      expect(expectErrorBody(scope.body, 'forbidden_scope').required_scope).toBe('events:write');
      expect(scope.headers['x-ratelimit-remaining']).toBe('0');
      // The bucket is full: a permitted request gets 429 ...
      const limitedRes = await call('GET', `/events/v0/events/${randomUUID()}`, { token });
      expect(limitedRes.status).toBe(429);
      expectErrorBody(limitedRes.body, 'rate_limited');
      // ... while the earlier checks still answer first.
      expect((await call('POST', '/events/v0/events', { token, body: {} })).status).toBe(403);
      expect((await call('GET', `/events/v0/events/${randomUUID()}`, { token, headers: badVersion })).status).toBe(400);
      expect((await call('GET', '/events/v0/nope', { token })).status).toBe(404);
    } finally {
      await limited.close();
    }
  });
});

describe('platform-version (contract section 5)', () => {
  test('absent: served as 2024-12-01, passed to the service and echoed', async () => {
    const { token } = await createTestKey(gw.stores);
    const res = await get(`/events/v0/events/${randomUUID()}`, { token });
    expect(res.status).toBe(200);
    expect(res.headers['platform-version']).toBe('2024-12-01');
    expect(res.body.headers['platform-version']).toBe('2024-12-01');
  });

  test('the supported value is served and echoed', async () => {
    const { token } = await createTestKey(gw.stores);
    const res = await get(`/events/v0/events/${randomUUID()}`, { token, headers: { 'platform-version': '2024-12-01' } });
    expect(res.status).toBe(200);
    expect(res.headers['platform-version']).toBe('2024-12-01');
  });

  test('any other value: 400 with the unsupported_version error, answered as 2024-12-01', async () => {
    const { token } = await createTestKey(gw.stores);
    const before = gw.upstream.received.length;
    for (const value of ['2025-01-01', '', 'latest']) {
      const res = await get(`/events/v0/events/${randomUUID()}`, { token, headers: { 'platform-version': value } });
      expect(res.status).toBe(400);
      expect(res.headers['platform-version']).toBe('2024-12-01');
      const error = expectErrorBody(res.body, 'invalid_request');
      expect(error.errors).toEqual([{ in: 'header', field: 'platform-version', code: 'unsupported_version', message: 'supported: 2024-12-01' }]);
    }
    expect(gw.upstream.received.length).toBe(before);
  });
});

describe('scopes', () => {
  test('a key with the needed scope passes; one without gets 403 naming the scope', async () => {
    const { token } = await createTestKey(gw.stores, { scopes: ['items:read', 'tickets:write'] });
    expect((await get('/warehouse/v1/items', { token })).status).toBe(200);
    expect((await post(`/events/v0/tickets/${randomUUID()}/validate`, { token })).status).toBe(200);
    const denied = await post(`/warehouse/v1/items/${randomUUID()}/stock-adjustments`, { token, body: { delta: 1 } });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'forbidden_scope', required_scope: 'stock:write' });
  });
});

describe('proxying', () => {
  test('strips the prefix, keeps the query, signs the identity, and passes request id and version', async () => {
    const key = await createTestKey(gw.stores, { scopes: ['tickets:read'] });
    const ticketId = randomUUID();
    const res = await get(`/events/v0/tickets/${ticketId}?expand=event&x=1`, { token: key.token, headers: { 'x-request-id': 'trace-42' } });
    expect(res.status).toBe(200);
    const seen = res.body;
    expect(seen.url).toBe(`/tickets/${ticketId}?expand=event&x=1`);
    expect(seen.signature_valid).toBe(true);
    expect(seen.headers).toMatchObject({
      'x-platform-workspace-id': key.workspaceId,
      'x-platform-key-id': key.keyId,
      'x-platform-scopes': 'tickets:read',
      'x-request-id': 'trace-42',
      'platform-version': '2024-12-01',
    });
    expect(seen.headers.authorization).toBeUndefined();
    // The gateway's headers win over the service's; the service's own headers pass through.
    expect(res.headers['x-request-id']).toBe('trace-42');
    expect(res.headers['x-upstream']).toBe('echo');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  test('an unrestricted key is passed as scopes "*"', async () => {
    const { token } = await createTestKey(gw.stores);
    const res = await get('/pipelines/v3/pipelines/p1', { token });
    expect(res.body.url).toBe('/pipelines/p1');
    expect(res.body.headers['x-platform-scopes']).toBe('*');
  });

  test('every client header starting with x-platform- is stripped; hop-by-hop headers are not forwarded', async () => {
    const key = await createTestKey(gw.stores);
    // node:http, because undici will not send a Connection header naming other headers.
    const res = await rawRequest(`${gw.url}/warehouse/v1/items?sku=a`, {
      method: 'GET',
      headers: {
        authorization: `Bearer ${key.token}`,
        'x-platform-workspace-id': randomUUID(),
        'x-platform-key-id': 'forged',
        'x-platform-scopes': '*',
        'x-platform-timestamp': '1',
        'x-platform-signature': 'f'.repeat(64),
        'x-platform-quotas': 'pipelines=999999;scheduled_pipelines=999999;webhook_endpoints=999999',
        'x-platform-quotas-signature': 'f'.repeat(64),
        'x-platform-anything': 'forged',
        'X-Platform-Mixed-Case': 'forged',
        'x-custom': 'kept',
        connection: 'keep-alive, x-drop-me',
        'x-drop-me': 'hop',
      },
    });
    expect(res.status).toBe(200);
    const forwarded = Object.keys(res.body.headers)
      .filter((name) => name.startsWith('x-platform-'))
      .sort();
    expect(forwarded).toEqual([
      'x-platform-key-id',
      'x-platform-quotas',
      'x-platform-quotas-signature',
      'x-platform-scopes',
      'x-platform-signature',
      'x-platform-timestamp',
      'x-platform-workspace-id',
    ]);
    expect(res.body.headers['x-platform-workspace-id']).toBe(key.workspaceId);
    expect(res.body.headers['x-platform-key-id']).toBe(key.keyId);
    expect(res.body.signature_valid).toBe(true);
    // The workspace's quotas as the gateway signed them, never the client's (contract section 20).
    expect(res.body.quotas).toEqual(DEFAULT_SERVICE_QUOTA_LIMITS);
    expect(res.body.headers['x-custom']).toBe('kept');
    expect(res.body.headers['x-drop-me']).toBeUndefined();
  });

  test('request bodies are streamed to the service and the service’s status passes through', async () => {
    const { token } = await createTestKey(gw.stores);
    const body = { name: 'Gala', starts_at: '2025-06-01T18:00:00Z', note: 'ü'.repeat(1000) };
    const res = await post('/events/v0/events?status=201', { token, body });
    expect(res.status).toBe(201);
    expect(res.body.method).toBe('POST');
    expect(JSON.parse(res.body.body)).toEqual(body);
    expect(res.body.headers['content-type']).toBe('application/json');
  });

  test('a chunked body (no Content-Length) is streamed', async () => {
    const { token } = await createTestKey(gw.stores);
    const res = await chunkedPost(`${gw.url}/events/v0/events`, token, [Buffer.from('{"name":'), Buffer.from('"x"}')]);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).body).toBe('{"name":"x"}');
  });
});

describe('body size (413)', () => {
  test('a declared Content-Length over 1 MiB is refused before the service sees it', async () => {
    const { token } = await createTestKey(gw.stores);
    const before = gw.upstream.received.length;
    const res = await post('/events/v0/events', { token, body: Buffer.alloc(1024 * 1024 + 1, 0x61), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(413);
    expectErrorBody(res.body, 'payload_too_large');
    expect(res.headers['x-ratelimit-limit']).toBe('400');
    expect(gw.upstream.received.length).toBe(before);
  });

  test('exactly 1 MiB passes', async () => {
    const { token } = await createTestKey(gw.stores);
    const res = await post('/events/v0/events', { token, body: Buffer.alloc(1024 * 1024, 0x61), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
    expect(res.body.body_bytes).toBe(1024 * 1024);
  });

  test('a chunked body is counted while it streams: 413 past 1 MiB', async () => {
    const { token } = await createTestKey(gw.stores);
    const chunks = Array.from({ length: 5 }, () => Buffer.alloc(256 * 1024, 0x61));
    const res = await chunkedPost(`${gw.url}/events/v0/events`, token, chunks);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error.code).toBe('payload_too_large');
  });
});

describe('rate-limit headers (contract section 6)', () => {
  test('every response under a prefix carries limit, remaining after the request, and reset in epoch seconds', async () => {
    const { token } = await createTestKey(gw.stores);
    const before = Date.now();
    const first = await get(`/events/v0/events/${randomUUID()}`, { token });
    const after = Date.now();
    const second = await get(`/events/v0/events/${randomUUID()}`, { token });
    expect(first.headers['x-ratelimit-limit']).toBe('400');
    expect(first.headers['x-ratelimit-remaining']).toBe('399');
    expect(second.headers['x-ratelimit-remaining']).toBe('398');
    const reset = Number(first.headers['x-ratelimit-reset']);
    expect(Number.isInteger(reset)).toBe(true);
    // Requests remain: one more is accepted now, i.e. while the first request was answered.
    expect(reset).toBeGreaterThanOrEqual(Math.floor(before / 1000) - 1);
    expect(reset).toBeLessThanOrEqual(Math.ceil(after / 1000) + 1);
  });

  test('each route counts in its bucket', async () => {
    const { token } = await createTestKey(gw.stores);
    const limitOf = async (method: string, path: string) =>
      (await gw.client.call(gw.url, method, path, { token, body: method === 'POST' ? {} : undefined })).headers['x-ratelimit-limit'];
    expect(await limitOf('GET', '/warehouse/v1/items')).toBe('600');
    expect(await limitOf('POST', '/warehouse/v1/items/bulk')).toBe('60');
    expect(await limitOf('GET', '/pipelines/v3/pipelines/p')).toBe('300');
    expect(await limitOf('POST', '/pipelines/v3/pipelines/p/runs')).toBe('100');
    expect(await limitOf('POST', '/events/v0/events')).toBe('400');
    // Separate buckets: the bulk call did not use the general warehouse bucket.
    expect((await get('/warehouse/v1/items', { token })).headers['x-ratelimit-remaining']).toBe('598');
  });

  test('over the limit: 429 rate_limited with Retry-After, Remaining 0 and Reset in the future', async () => {
    const limited = await startGateway({ upstreams: allUpstreams(gw.upstream.url), limits: { warehouse: 2 } });
    try {
      const { token } = await createTestKey(limited.stores);
      const call = () => gw.client.call(limited.url, 'GET', '/warehouse/v1/items', { token });
      const before = Date.now();
      const ok1 = await call();
      const ok2 = await call();
      expect([ok1.status, ok2.status]).toEqual([200, 200]);
      expect(ok2.headers['x-ratelimit-remaining']).toBe('0');
      const denied = await call();
      const after = Date.now();
      expect(denied.status).toBe(429);
      expectErrorBody(denied.body, 'rate_limited');
      expect(denied.headers['x-ratelimit-limit']).toBe('2');
      expect(denied.headers['x-ratelimit-remaining']).toBe('0');
      const retryAfter = Number(denied.headers['retry-after']);
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      const reset = Number(denied.headers['x-ratelimit-reset']);
      // A minute after the window's first request, which was sent between `before` and `after`.
      expect(reset).toBeGreaterThan(before / 1000 + 55);
      expect(reset).toBeLessThanOrEqual(Math.ceil(after / 1000) + 61);
      // Rejected requests do not count, and another key has its own bucket.
      const other = await createTestKey(limited.stores);
      expect((await gw.client.call(limited.url, 'GET', '/warehouse/v1/items', { token: other.token })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('unavailable services (503)', () => {
  test('a service that refuses connections gives 503 temporarily_unavailable with Retry-After: 1', async () => {
    const down = await startGateway({ upstreams: allUpstreams(DEAD_URL) });
    try {
      const { token } = await createTestKey(down.stores);
      const res = await gw.client.call(down.url, 'GET', `/events/v0/events/${randomUUID()}`, { token });
      expect(res.status).toBe(503);
      expectErrorBody(res.body, 'temporarily_unavailable');
      expect(res.headers['retry-after']).toBe('1');
      expect(res.headers['x-ratelimit-limit']).toBe('400');
      expect(res.headers['platform-version']).toBe('2024-12-01');
    } finally {
      await down.close();
    }
  });

  test('a service slower than the gateway timeout gives 503', async () => {
    const slow = await startEchoUpstream({ delayMs: 1_500 });
    const impatient = await startGateway({ upstreams: allUpstreams(slow.url), upstreamTimeoutMs: 300 });
    try {
      const { token } = await createTestKey(impatient.stores);
      // The service answers 200 only after 1.5 s: a 503 is the gateway's timeout ending the wait first.
      const res = await gw.client.call(impatient.url, 'GET', `/events/v0/events/${randomUUID()}`, { token });
      expect(res.status).toBe(503);
      expectErrorBody(res.body, 'temporarily_unavailable');
    } finally {
      await impatient.close();
      await slow.close();
    }
  });
});

function rawRequest(url: string, options: http.RequestOptions): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { ...options, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(parts).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** POST with Transfer-Encoding: chunked (undici always sends a Content-Length for buffers). */
function chunkedPost(url: string, token: string, chunks: Buffer[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(parts).toString('utf8') }));
    });
    req.on('error', reject);
    let i = 0;
    const next = (): void => {
      if (i === chunks.length) return void req.end();
      req.write(chunks[i++], () => setImmediate(next));
    };
    next();
  });
}
