// Contract sections 3, 16, 17: a key change reaches every gateway instance within 1 s whatever Redis
// does. Two instances of one deployment (one database, one key prefix), each on Redis through a
// fault proxy: A, which takes the admin calls, cannot announce anything (its Redis swallows every
// byte, so each publish times out); B is on Redis, or cut off from it too. Both keep keys cached for
// 2 minutes, far beyond each wait here, so B can learn of a change only from the key-change log.
import { startTcpProxy, testRedisUrl, uniqueName, waitFor, type TcpProxy } from '@platform/testing';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from './redis';
import { ADMIN_TOKEN, allUpstreams, createTestKey, httpClient, startEchoUpstream, startGateway, type EchoUpstream, type TestGateway } from './test/gateway';

/** Far beyond every wait below: an instance that re-read its keys only this often could not pass. */
const CACHE_TTL_MS = 120_000;
/** Generous for a busy machine, and far below CACHE_TTL_MS. */
const DEADLINE_MS = 30_000;

interface Pair {
  a: TestGateway;
  b: TestGateway;
  proxyA: TcpProxy;
  proxyB: TcpProxy;
  upstream: EchoUpstream;
}

let pair: Pair | undefined;
const client = httpClient();

async function startPair(): Promise<Pair> {
  const redis = new URL(testRedisUrl());
  const target = { host: redis.hostname, port: Number(redis.port || 6379) };
  const [proxyA, proxyB, upstream] = await Promise.all([startTcpProxy(target), startTcpProxy(target), startEchoUpstream()]);
  const options = {
    upstreams: allUpstreams(upstream.url),
    redisPrefix: `test:${uniqueName('key-changes')}:`,
    keyCache: { ttlMs: CACHE_TTL_MS },
    awaitSubscription: true,
    // Production's: A's publishes into a silent Redis fail as fast as they would there.
    redisCommandTimeoutMs: DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    // The quotas' usage of idempotency bytes lives in Redis, which A cannot reach here: a PATCH needs
    // its usage to answer (section 20), so this test of the key-change log gives it a count of its own.
    idempotencyBytesUsed: () => Promise.resolve(0),
  };
  const a = await startGateway({ ...options, redisUrl: `redis://127.0.0.1:${proxyA.port}` });
  const b = await startGateway({ ...options, redisUrl: `redis://127.0.0.1:${proxyB.port}` });
  return { a, b, proxyA, proxyB, upstream };
}

afterEach(async () => {
  if (!pair) return;
  const { a, b, proxyA, proxyB, upstream } = pair;
  pair = undefined;
  // Connections cut first: one that swallows every byte would make QUIT wait forever.
  for (const proxy of [proxyA, proxyB]) {
    proxy.setMode('refuse');
    proxy.cut();
  }
  await Promise.all([a.close(), b.close(), upstream.close()]);
  await Promise.all([proxyA.close(), proxyB.close()]);
});

afterAll(() => client.close());

type RedisOfB = 'B on Redis' | 'B cut off from Redis too';

/** A's Redis swallows every byte (publishes time out); B's works or refuses every connection. */
function breakRedis({ proxyA, proxyB }: Pair, b: RedisOfB): void {
  proxyA.setMode('blackhole');
  if (b === 'B cut off from Redis too') {
    proxyB.setMode('refuse');
    proxyB.cut();
  }
}

const listEvents = (gateway: TestGateway, token: string) => client.call(gateway.url, 'GET', '/events/v0/events', { token });
const admin = (gateway: TestGateway, method: string, path: string, body?: unknown) =>
  client.call(gateway.url, method, `/admin/v1${path}`, { token: ADMIN_TOKEN, body });

async function statusBecomes(gateway: TestGateway, token: string, status: number, what: string): Promise<void> {
  await waitFor(what, async () => (await listEvents(gateway, token)).status === status, DEADLINE_MS, 20);
}

describe.each<RedisOfB>(['B on Redis', 'B cut off from Redis too'])('A cannot announce on Redis, %s', (redisOfB) => {
  test('a revoke, a roll, an edit and a quota change made through A apply on B from the key-change log', async () => {
    pair = await startPair();
    const { a, b } = pair;
    const revoked = await createTestKey(a.stores);
    const rolled = await createTestKey(a.stores);
    const edited = await createTestKey(a.stores, { scopes: ['events:read'] });
    const limited = await createTestKey(a.stores);
    // B holds every key in its cache: only a change it hears of can alter its answers.
    for (const key of [revoked, rolled, edited, limited]) expect((await listEvents(b, key.token)).status).toBe(200);
    breakRedis(pair, redisOfB);

    expect((await admin(a, 'PATCH', `/workspaces/${limited.workspaceId}/quotas`, { pipelines: 7 })).status).toBe(200);
    await waitFor('B to sign the new quotas', async () => (await listEvents(b, limited.token)).body?.quotas?.pipelines === 7, DEADLINE_MS, 20);
    expect((await listEvents(a, limited.token)).body.quotas.pipelines).toBe(7);

    expect((await admin(a, 'DELETE', `/workspaces/${revoked.workspaceId}/api-keys/${revoked.keyId}`)).status).toBe(204);
    const roll = await admin(a, 'POST', `/workspaces/${rolled.workspaceId}/api-keys/${rolled.keyId}/roll`, { expires_in_seconds: 0 });
    expect(roll.status).toBe(201);
    expect((await admin(a, 'PATCH', `/workspaces/${edited.workspaceId}/api-keys/${edited.keyId}`, { scopes: ['tickets:read'] })).status).toBe(200);

    await statusBecomes(b, revoked.token, 401, 'B to refuse the revoked key');
    await statusBecomes(b, rolled.token, 401, 'B to refuse the rolled key');
    await statusBecomes(b, edited.token, 403, 'B to apply the edited scopes');
    expect((await listEvents(b, roll.body.token)).status).toBe(200);
    // A applied each change at once, without Redis.
    expect((await listEvents(a, revoked.token)).status).toBe(401);
    expect((await listEvents(a, rolled.token)).status).toBe(401);
    expect((await listEvents(a, edited.token)).status).toBe(403);
  }, 120_000);
});

describe.each<RedisOfB | 'Redis up everywhere'>(['Redis up everywhere', 'B on Redis', 'B cut off from Redis too'])('10 concurrent rolls, %s', (redisOfB) => {
  test('every old token is refused on both gateways after its overlap; every new one works', async () => {
    pair = await startPair();
    const { a, b } = pair;
    const keys = await Promise.all(Array.from({ length: 10 }, () => createTestKey(a.stores)));
    for (const gateway of [a, b]) for (const key of keys) expect((await listEvents(gateway, key.token)).status).toBe(200);
    if (redisOfB !== 'Redis up everywhere') breakRedis(pair, redisOfB);

    const rolls = await Promise.all(
      keys.map((key) => admin(a, 'POST', `/workspaces/${key.workspaceId}/api-keys/${key.keyId}/roll`, { expires_in_seconds: 1 })),
    );
    expect(rolls.map((r) => r.status)).toEqual(keys.map(() => 201));

    for (const gateway of [a, b]) {
      for (const [i, key] of keys.entries()) {
        await waitFor(
          `gateway ${gateway === a ? 'A' : 'B'} to refuse old token ${i} as expired`,
          async () => {
            const answer = await listEvents(gateway, key.token);
            return answer.status === 401 && answer.body?.error?.message === 'This API key has expired.';
          },
          DEADLINE_MS,
          20,
        );
        expect((await listEvents(gateway, rolls[i]!.body.token)).status).toBe(200);
      }
    }
  }, 120_000);
});
