import { randomUUID } from 'node:crypto';
import { expectErrorBody, sleep, uniqueName, waitFor } from '@platform/testing';
import { revokeApiKey } from './keys.service';
import { redisKeyChangePublisher } from './key-changes';
import { ADMIN_TOKEN, allUpstreams, createTestKey, startEchoGateway, startGateway, type EchoGateway } from './test/gateway';
import { generateToken } from './tokens';

let gw: EchoGateway;

/** Far beyond every wait here: a change that shows was announced, not waited out of the cache. */
const CACHE_TTL_MS = 300_000;

beforeAll(async () => {
  gw = await startEchoGateway({ keyCache: { ttlMs: CACHE_TTL_MS } });
});
afterAll(() => gw.close());

const path = () => `/events/v0/events/${randomUUID()}`;

describe('tokens (contract section 3)', () => {
  test('missing, malformed, wrong-scheme and unknown tokens get 401 with the per-IP bucket’s headers', async () => {
    for (const authorization of [undefined, 'Bearer nope', `Basic ${generateToken()}`, `Bearer ${generateToken()}`]) {
      const res = await gw.client.call(gw.url, 'GET', path(), { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expectErrorBody(res.body, 'unauthorized');
      expect(res.headers['x-ratelimit-limit']).toBe('100');
      expect(res.headers['platform-version']).toBe('2024-12-01');
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
    }
  });

  test('a valid key passes', async () => {
    const { token } = await createTestKey(gw.stores);
    expect((await gw.client.call(gw.url, 'GET', path(), { token })).status).toBe(200);
  });

  test('a key past its expires_at gets 401', async () => {
    const { token } = await createTestKey(gw.stores, { expiresAt: new Date(Date.now() - 1_000) });
    const res = await gw.client.call(gw.url, 'GET', path(), { token });
    expect(res.status).toBe(401);
    expect(expectErrorBody(res.body, 'unauthorized').message).toMatch(/expired/);
  });

  test('a cached key stops working the moment it expires', async () => {
    // A key cached before it expires (on a busy machine the first request may come too late: a new key then).
    const { token, expiresAt } = await waitFor('a key cached before its expiry', async () => {
      const expiry = new Date(Date.now() + 1_000);
      const key = await createTestKey(gw.stores, { expiresAt: expiry });
      return (await gw.client.call(gw.url, 'GET', path(), { token: key.token })).status === 200 && { token: key.token, expiresAt: expiry.getTime() };
    });
    // The scenario: the expiry passes (a sleep past it, not a wait for an event).
    await sleep(Math.max(0, expiresAt - Date.now()) + 100);
    expect((await gw.client.call(gw.url, 'GET', path(), { token })).status).toBe(401);
  });

  test('once cached, a key is served without querying the database', async () => {
    const key = await createTestKey(gw.stores);
    expect((await gw.client.call(gw.url, 'GET', path(), { token: key.token })).status).toBe(200);
    // The row is gone; only the cache can still know the key.
    await gw.db.$executeRaw`DELETE FROM "api_keys" WHERE "id" = ${key.keyId}::uuid`;
    expect((await gw.client.call(gw.url, 'GET', path(), { token: key.token })).status).toBe(200);
  });

  test('last_used_at is written later, in a batch, not by the request', async () => {
    const key = await createTestKey(gw.stores);
    await gw.app.flushKeyActivity();
    const before = Date.now();
    expect((await gw.client.call(gw.url, 'GET', path(), { token: key.token })).status).toBe(200);
    const row = async () => (await gw.stores.keys.listApiKeys(key.workspaceId, { take: 1 }))[0]!;
    expect((await row()).lastUsedAt).toBeNull();
    await gw.app.flushKeyActivity();
    expect((await row()).lastUsedAt!.getTime()).toBeGreaterThanOrEqual(before - 5);
  });
});

describe('revocation reaches every instance', () => {
  test('a key revoked through one instance’s admin API fails on the other within 1 s', async () => {
    const prefix = `test:${uniqueName('fleet')}:`;
    // A long cache TTL: only the pub/sub message can make the second instance notice.
    const options = { upstreams: allUpstreams(gw.upstream.url), redisPrefix: prefix, keyCache: { ttlMs: CACHE_TTL_MS } };
    const a = await startGateway(options);
    const b = await startGateway(options);
    try {
      const key = await createTestKey(a.stores);
      expect((await gw.client.call(b.url, 'GET', path(), { token: key.token })).status).toBe(200);
      const revoked = await gw.client.call(a.url, 'DELETE', `/admin/v1/workspaces/${key.workspaceId}/api-keys/${key.keyId}`, { token: ADMIN_TOKEN });
      expect(revoked.status).toBe(204);
      // The 1 s of the contract is the feed's poll period; here: it arrives long before the cache lets go.
      await waitFor('the revocation on the other instance', async () => (await gw.client.call(b.url, 'GET', path(), { token: key.token })).status === 401);
      // And on the instance that revoked it, at once.
      expect((await gw.client.call(a.url, 'GET', path(), { token: key.token })).status).toBe(401);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a revocation made outside the gateway (the CLI’s path) is announced the same way', async () => {
    const key = await createTestKey(gw.stores);
    expect((await gw.client.call(gw.url, 'GET', path(), { token: key.token })).status).toBe(200);
    await revokeApiKey(gw.stores.keys, { publisher: redisKeyChangePublisher(gw.redis, gw.redisPrefix) }, key.workspaceId, key.keyId);
    await waitFor('the announced revocation', async () => (await gw.client.call(gw.url, 'GET', path(), { token: key.token })).status === 401);
  });
});

describe('failed-authentication limit per IP (contract section 4)', () => {
  test('after 100 failures in a minute an IP gets 429 instead of 401, admin failures included; a valid token still works', async () => {
    const own = await startGateway({ upstreams: allUpstreams(gw.upstream.url) });
    try {
      const { token } = await createTestKey(own.stores);
      const statuses: number[] = [];
      for (let i = 0; i < 60; i++) statuses.push((await gw.client.call(own.url, 'GET', path(), { token: generateToken() })).status);
      for (let i = 0; i < 40; i++) statuses.push((await gw.client.call(own.url, 'GET', '/admin/v1/workspaces', { token: generateToken() })).status);
      expect(statuses.every((s) => s === 401)).toBe(true);

      const blocked = await gw.client.call(own.url, 'GET', path());
      expect(blocked.status).toBe(429);
      expectErrorBody(blocked.body, 'rate_limited');
      expect(blocked.headers['x-ratelimit-limit']).toBe('100');
      expect(blocked.headers['x-ratelimit-remaining']).toBe('0');
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const adminBlocked = await gw.client.call(own.url, 'GET', '/admin/v1/workspaces', { token: 'wrong' });
      expect(adminBlocked.status).toBe(429);
      expect(adminBlocked.headers['retry-after']).toEqual(expect.any(String));

      // Valid credentials are not affected.
      const ok = await gw.client.call(own.url, 'GET', path(), { token });
      expect(ok.status).toBe(200);
      expect(ok.headers['x-ratelimit-limit']).toBe('400');
      expect((await gw.client.call(own.url, 'GET', '/admin/v1/workspaces', { token: ADMIN_TOKEN })).status).toBe(200);
    } finally {
      await own.close();
    }
  });
});
