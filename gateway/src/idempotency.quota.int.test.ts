// Contract section 20: the bytes of a workspace's stored answers are bounded by its idempotency_bytes.
// A new Idempotency-Key past it is 429 rate_limited with Retry-After and never runs; replays and
// requests without the header are served; concurrent new keys pass the quota by at most 1 MiB; the
// count falls as records expire; two platforms on one Redis count apart; the same on a Redis Cluster.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { expectErrorBody, metricSample, startRedisCluster, waitFor, withMetrics, type RedisCluster } from '@platform/testing';
import { idempotencyBytesUsed, idempotencyKeys } from './idempotency';
import { allUpstreams, closeServer, createTestKey, httpClient, listen, startGateway, type GatewayOptions, type Reply, type TestGateway } from './test/gateway';

const MIB = 1024 * 1024;
const PATH = '/warehouse/v1/items';
/** Far above what the tests send: only the quota refuses here. */
const LIMITS = { warehouse: 1_000_000 };

/** A service whose answers are `?bytes=N` bytes of JSON, after `?delay_ms=N`; it counts what it ran per Idempotency-Key. */
interface SizedUpstream {
  url: string;
  ran(key?: string): number;
  close(): Promise<void>;
}

async function startSizedUpstream(): Promise<SizedUpstream> {
  const runs = new Map<string, number>();
  let total = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      total++;
      const key = req.headers['idempotency-key'];
      if (typeof key === 'string') runs.set(key, (runs.get(key) ?? 0) + 1);
      const query = new URL(req.url!, 'http://x').searchParams;
      const size = Number(query.get('bytes') ?? 100);
      const body = `{"pad":"${'x'.repeat(Math.max(0, size - 10))}"}`;
      setTimeout(
        () => {
          res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
          res.end(body);
        },
        Number(query.get('delay_ms') ?? 0),
      );
    });
  });
  const url = await listen(server);
  return { url, ran: (key) => (key === undefined ? total : (runs.get(key) ?? 0)), close: () => closeServer(server) };
}

let upstream: SizedUpstream;
const client = httpClient();
let gateways: TestGateway[] = [];

beforeAll(async () => {
  upstream = await startSizedUpstream();
});
afterEach(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  gateways = [];
});
afterAll(async () => {
  await client.close();
  await upstream.close();
});

async function gateway(options: GatewayOptions): Promise<TestGateway> {
  const gw = await startGateway({ upstreams: allUpstreams(upstream.url), limits: LIMITS, ...options });
  gateways.push(gw);
  return gw;
}

const post = (gw: TestGateway, token: string, key: string | undefined, query: string, body: unknown = { sku: 'a' }): Promise<Reply> =>
  client.call(gw.url, 'POST', `${PATH}?${query}`, { token, body, headers: key === undefined ? {} : { 'idempotency-key': key } });

const newKey = () => `key-${randomUUID()}`;

function expectQuotaRefusal(res: Reply, limit: number, maxRetryAfter: number): number {
  expect(res.status).toBe(429);
  const error = expectErrorBody(res.body, 'rate_limited');
  expect(error).toMatchObject({ quota: 'idempotency_bytes', limit });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxRetryAfter);
  return retryAfter;
}

/** New keys one after another until one is refused; returns the keys stored, checking each step's count. */
async function fillQuota(gw: TestGateway, token: string, workspaceId: string, limit: number, query: string): Promise<{ stored: string[]; refused: Reply }> {
  const stored: string[] = [];
  for (;;) {
    const before = await idempotencyBytesUsed(gw.redis, gw.redisPrefix, workspaceId);
    const key = newKey();
    const res = await post(gw, token, key, query);
    if (res.status === 429) {
      // Refused only once the stored answers reach the limit, and before anything ran.
      expect(before).toBeGreaterThanOrEqual(limit);
      expect(upstream.ran(key)).toBe(0);
      return { stored, refused: res };
    }
    expect(res.status).toBe(201);
    expect(before).toBeLessThan(limit);
    stored.push(key);
    if (stored.length > 100) throw new Error('the quota never refused');
  }
}

describe('a workspace at its idempotency_bytes (one Redis)', () => {
  const LIMIT = 10 * 1024;

  test('new keys are stored until the quota is reached; then a new key is 429 with Retry-After and does not run; replays and requests without the header are served', async () => {
    const gw = await withMetrics((registry) =>
      startGateway({ upstreams: allUpstreams(upstream.url), limits: LIMITS, idempotencyBytes: LIMIT, metrics: registry }),
    );
    gateways.push(gw);
    const { token, workspaceId } = await createTestKey(gw.stores);
    const { stored, refused } = await fillQuota(gw, token, workspaceId, LIMIT, 'bytes=2000');
    expect(stored.length).toBeGreaterThanOrEqual(5);
    const used = await idempotencyBytesUsed(gw.redis, gw.redisPrefix, workspaceId);
    // The last answer admitted passed the quota by its own size.
    expect(used).toBeLessThan(LIMIT + 2100);
    // Retry-After: until the oldest stored answer expires, 24 h after it was stored a moment ago.
    expect(expectQuotaRefusal(refused, LIMIT, 86_400)).toBeGreaterThan(86_400 - 120);
    expect(refused.headers['x-ratelimit-limit']).toBe(String(LIMITS.warehouse));

    const ranBefore = upstream.ran();
    const again = newKey();
    expectQuotaRefusal(await post(gw, token, again, 'bytes=2000'), LIMIT, 86_400);
    expect(upstream.ran(again)).toBe(0);
    expect(upstream.ran()).toBe(ranBefore);

    const replay = await post(gw, token, stored[0], 'bytes=2000');
    expect([replay.status, replay.headers['idempotent-replayed']]).toEqual([201, 'true']);
    expect(upstream.ran(stored[0])).toBe(1);
    // A stored key with another body is still its 409, not the quota's 429.
    expect((await post(gw, token, stored[0], 'bytes=2000', { sku: 'other' })).status).toBe(409);

    const plain = await post(gw, token, undefined, 'bytes=2000');
    expect(plain.status).toBe(201);
    expect(upstream.ran()).toBe(ranBefore + 1);
    expect(await idempotencyBytesUsed(gw.redis, gw.redisPrefix, workspaceId)).toBe(used);

    // Another workspace is not refused.
    const other = await createTestKey(gw.stores);
    expect((await post(gw, other.token, newKey(), 'bytes=2000')).status).toBe(201);

    expect(metricSample(await gw.metrics.scrape(), 'gateway_idempotency_quota_refusals_total')).toBe(2);
  });

  test(
    '50 concurrent new keys, several times over, never take the stored answers past the quota + 1 MiB; every admitted answer is stored',
    () => expectConcurrentWavesBounded(gateway),
    120_000,
  );

  test('a quota of 0 refuses every new key; Retry-After is a day, as nothing stored will expire to make room', async () => {
    const gw = await gateway({ idempotencyBytes: 0 });
    const { token } = await createTestKey(gw.stores);
    const key = newKey();
    expect(expectQuotaRefusal(await post(gw, token, key, 'bytes=100'), 0, 86_400)).toBe(86_400);
    expect(upstream.ran(key)).toBe(0);
  });
});

/**
 * Waves of 50 concurrent new keys, each answer ~400 KB against a 3 MiB quota, until a wave admits none with
 * the quota reached. Without reservations, the first wave alone would store 20 MB. On this shared
 * machine a wave may slow Redis past the gateway's 100 ms command timeout: such a key gets the
 * contract's 503 and does not run either (section 17), and an answer whose record missed it is
 * written moments later (storeLater).
 */
async function expectConcurrentWavesBounded(start: (options: GatewayOptions) => Promise<TestGateway>): Promise<void> {
  const limit = 3 * MIB;
  const gw = await start({ idempotencyBytes: limit });
  const { token, workspaceId } = await createTestKey(gw.stores);
  const query = 'bytes=400000&delay_ms=200';
  for (let wave = 0; ; wave++) {
    if (wave > 30) throw new Error('the quota never refused a whole wave');
    const keys = Array.from({ length: 50 }, newKey);
    const replies = await Promise.all(keys.map((key) => post(gw, token, key, query)));
    const admitted: string[] = [];
    keys.forEach((key, i) => {
      const reply = replies[i]!;
      if (reply.status === 201) return void admitted.push(key);
      if (reply.status === 429) expectQuotaRefusal(reply, limit, 86_400);
      else expectErrorBody(reply.body, 'temporarily_unavailable');
      expect(upstream.ran(key)).toBe(0);
    });
    // Nothing ran without its record: every admitted key replays (once its record is written).
    for (const key of admitted) {
      const replay = await waitFor(
        `${key} to replay`,
        async () => {
          const res = await post(gw, token, key, query);
          return res.status === 201 ? res : undefined;
        },
        60_000,
        50,
      );
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(upstream.ran(key)).toBe(1);
    }
    const used = await idempotencyBytesUsed(gw.redis, gw.redisPrefix, workspaceId);
    expect(used).toBeLessThanOrEqual(limit + MIB);
    if (admitted.length === 0 && replies.some((r) => r.status === 429) && used >= limit) break;
  }
}

describe('expiry', () => {
  test('as records expire the count falls, with no sweeper, and new keys are admitted again', async () => {
    const LIMIT = 4 * 1024;
    const recordTtlMs = 3_000;
    const gw = await gateway({ idempotencyBytes: LIMIT, idempotencyRecordTtlMs: recordTtlMs });
    const { token, workspaceId } = await createTestKey(gw.stores);
    const { stored, refused } = await fillQuota(gw, token, workspaceId, LIMIT, 'bytes=2000');
    expect(stored.length).toBeGreaterThanOrEqual(2);
    expectQuotaRefusal(refused, LIMIT, Math.ceil(recordTtlMs / 1000));

    await waitFor('the stored answers to expire', async () => (await idempotencyBytesUsed(gw.redis, gw.redisPrefix, workspaceId)) === 0, 60_000, 100);
    // Nothing of the workspace's count is left behind in Redis.
    const keys = idempotencyKeys(gw.redisPrefix, workspaceId);
    expect(await gw.redis.exists(keys.answers, keys.sizes, keys.claims)).toBe(0);
    const key = newKey();
    expect((await post(gw, token, key, 'bytes=2000')).status).toBe(201);
    expect(upstream.ran(key)).toBe(1);
  });
});

test('two gateways with their own prefix on one Redis: one workspace’s quota reached on the first leaves the second’s untouched', async () => {
  const LIMIT = 4 * 1024;
  const first = await gateway({ idempotencyBytes: LIMIT });
  const second = await gateway({ idempotencyBytes: LIMIT });
  const { token, workspaceId } = await createTestKey(first.stores);
  const { stored } = await fillQuota(first, token, workspaceId, LIMIT, 'bytes=2000');
  expect(await idempotencyBytesUsed(second.redis, second.redisPrefix, workspaceId)).toBe(0);
  // The second platform does not read the first's record: the same key runs there as new.
  const res = await post(second, token, stored[0], 'bytes=2000');
  expect([res.status, res.headers['idempotent-replayed']]).toEqual([201, undefined]);
  expect(upstream.ran(stored[0])).toBe(2);
  expect(await idempotencyBytesUsed(second.redis, second.redisPrefix, workspaceId)).toBeGreaterThan(2000);
  expect(await idempotencyBytesUsed(first.redis, first.redisPrefix, workspaceId)).toBeGreaterThanOrEqual(LIMIT);
});

describe('on a Redis Cluster (contract section 17: every script in one hash slot)', () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  async function clusterGateway(options: GatewayOptions): Promise<TestGateway> {
    const gw = await gateway({ redisTarget: { topology: { kind: 'cluster', nodes: cluster.nodes } }, ...options });
    await waitFor('the cluster connection to be ready', () => gw.redis.status === 'ready', 60_000, 20);
    return gw;
  }

  test('the quota refuses a new key with Retry-After and no run; replays and requests without the header are served; workspaces spread over the masters', async () => {
    const LIMIT = 10 * 1024;
    const gw = await clusterGateway({ idempotencyBytes: LIMIT });
    const { token, workspaceId } = await createTestKey(gw.stores);
    const { stored, refused } = await fillQuota(gw, token, workspaceId, LIMIT, 'bytes=2000');
    expect(expectQuotaRefusal(refused, LIMIT, 86_400)).toBeGreaterThan(86_400 - 120);
    const replay = await post(gw, token, stored[0], 'bytes=2000');
    expect([replay.status, replay.headers['idempotent-replayed']]).toEqual([201, 'true']);
    expect((await post(gw, token, undefined, 'bytes=2000')).status).toBe(201);

    // The record and the count of one workspace are on one master; other workspaces are on others.
    const keys = idempotencyKeys(gw.redisPrefix, workspaceId);
    const master = await cluster.masterOfKey(keys.sizes);
    expect(await cluster.masterOfKey(keys.record('any'))).toEqual(master);
    const masters = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const node = await cluster.masterOfKey(idempotencyKeys(gw.redisPrefix, randomUUID()).sizes);
      masters.add(`${node.host}:${node.port}`);
    }
    expect(masters.size).toBe(3);
  });

  test('50 concurrent new keys, several times over, stay within the quota + 1 MiB', () => expectConcurrentWavesBounded(clusterGateway), 120_000);

  test('the count falls as records expire', async () => {
    const LIMIT = 4 * 1024;
    const gw = await clusterGateway({ idempotencyBytes: LIMIT, idempotencyRecordTtlMs: 2_000 });
    const { token, workspaceId } = await createTestKey(gw.stores);
    await fillQuota(gw, token, workspaceId, LIMIT, 'bytes=2000');
    await waitFor('the stored answers to expire', async () => (await idempotencyBytesUsed(gw.redis, gw.redisPrefix, workspaceId)) === 0, 60_000, 100);
    expect((await post(gw, token, newKey(), 'bytes=2000')).status).toBe(201);
  });
});
