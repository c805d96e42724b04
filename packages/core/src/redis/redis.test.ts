import { Cluster, Redis } from 'ioredis';
import { z } from 'zod';
import { CommonConfig, parseConfig } from '../process/config';
import { closeRedisConnection, createRedisConnection } from './redis';
import { describeRedisTarget, queueKeyPrefix, redisTarget } from './redis-config';

const Config = z.object({ ...CommonConfig.shape });
const parse = (env: Record<string, string>) => parseConfig(Config, env);

describe('Redis topology variables (contract section 17)', () => {
  test('none set: the local server, as npm start and the tests have it', () => {
    expect(redisTarget(parse({})).topology).toEqual({ kind: 'standalone', url: 'redis://127.0.0.1:6379' });
  });

  test('REDIS_URL: one server; rediss:// too', () => {
    expect(redisTarget(parse({ REDIS_URL: 'rediss://cache.internal:6380' })).topology).toEqual({ kind: 'standalone', url: 'rediss://cache.internal:6380' });
  });

  test('REDIS_CLUSTER_NODES: the seed nodes, IPv6 in brackets', () => {
    expect(redisTarget(parse({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-1.svc:7001,[::1]:7002' })).topology).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-1.svc', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
  });

  test('REDIS_SENTINELS with REDIS_SENTINEL_MASTER: the master the sentinels name', () => {
    expect(redisTarget(parse({ REDIS_SENTINELS: 's1:26379,s2:26379', REDIS_SENTINEL_MASTER: 'platform' })).topology).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      masterName: 'platform',
    });
  });

  test('credentials apply to every topology', () => {
    const target = redisTarget(parse({ REDIS_CLUSTER_NODES: 'a:1', REDIS_USERNAME: 'platform', REDIS_PASSWORD: 's3cret' }));
    expect([target.username, target.password]).toEqual(['platform', 's3cret']);
  });

  test('any other mix stops the process with one line naming the variables', () => {
    const refused: [Record<string, string>, RegExp][] = [
      [{ REDIS_URL: 'redis://a:6379', REDIS_CLUSTER_NODES: 'a:7000' }, /REDIS_URL, REDIS_CLUSTER_NODES/],
      [{ REDIS_CLUSTER_NODES: 'a:7000', REDIS_SENTINELS: 'a:26379', REDIS_SENTINEL_MASTER: 'm' }, /REDIS_CLUSTER_NODES, REDIS_SENTINELS/],
      [{ REDIS_SENTINELS: 'a:26379' }, /REDIS_SENTINEL_MASTER: required/],
      [{ REDIS_SENTINEL_MASTER: 'm' }, /REDIS_SENTINELS: required/],
      [{ REDIS_CLUSTER_NODES: 'a' }, /REDIS_CLUSTER_NODES/],
      [{ REDIS_CLUSTER_NODES: 'a:0' }, /REDIS_CLUSTER_NODES/],
      [{ REDIS_CLUSTER_NODES: 'a:7000,' }, /REDIS_CLUSTER_NODES/],
      [{ REDIS_URL: 'http://a:6379' }, /REDIS_URL/],
    ];
    for (const [env, line] of refused) {
      expect(() => parse(env)).toThrow(line);
      expect(() => parse(env)).toThrow(/^invalid configuration: [^\n]+$/);
    }
  });

  test('a banner line names the topology and never the password', () => {
    expect(describeRedisTarget(redisTarget(parse({ REDIS_URL: 'redis://user:pw@cache:6379/0' })))).toBe('redis: redis://cache:6379/0');
    expect(describeRedisTarget(redisTarget(parse({ REDIS_CLUSTER_NODES: '127.0.0.1:7000,[::1]:7001' })))).toBe('redis cluster: 127.0.0.1:7000,[::1]:7001');
    expect(describeRedisTarget(redisTarget(parse({ REDIS_SENTINELS: 's1:26379', REDIS_SENTINEL_MASTER: 'm' })))).toBe('redis sentinel: m via s1:26379');
  });
});

describe('queue key prefixes', () => {
  test('each queue under a hash tag of its own, every key still under the platform prefix', () => {
    expect(queueKeyPrefix('platform', 'pipeline-runs')).toBe('platform:{pipeline-runs}');
    expect(queueKeyPrefix('platform', 'webhooks-events')).not.toBe(queueKeyPrefix('platform', 'webhooks-warehouse'));
  });

  test('a QUEUE_PREFIX written as a hash tag loses its braces, or every queue would share one slot', () => {
    expect(queueKeyPrefix('{acme}', 'pipeline-runs')).toBe('acme:{pipeline-runs}');
  });
});

describe('createRedisConnection', () => {
  test('a cluster topology makes a cluster client; the others one server’s client', async () => {
    const made = [
      createRedisConnection({ topology: { kind: 'cluster', nodes: [{ host: '127.0.0.1', port: 1 }] } }, { name: 't', role: 'producer' }),
      createRedisConnection({ topology: { kind: 'sentinel', sentinels: [{ host: '127.0.0.1', port: 1 }], masterName: 'm' } }, { name: 't', role: 'worker' }),
      createRedisConnection('redis://127.0.0.1:1', { name: 't', role: 'command' }),
    ];
    expect(made.map((c) => c instanceof Cluster)).toEqual([true, false, false]);
    expect(made.map((c) => c instanceof Redis)).toEqual([false, true, true]);
    await Promise.all(made.map(closeRedisConnection));
  });

  test('roles: the hot path and producers never wait for Redis; workers do, as BullMQ requires', async () => {
    const command = createRedisConnection('redis://127.0.0.1:1', { name: 't', role: 'command', commandTimeoutMs: 50 }) as Redis;
    const worker = createRedisConnection('redis://127.0.0.1:1', { name: 't', role: 'worker' }) as Redis;
    const clusterWorker = createRedisConnection(
      { topology: { kind: 'cluster', nodes: [{ host: '127.0.0.1', port: 1 }] } },
      { name: 't', role: 'worker' },
    ) as Cluster;
    expect([command.options.enableOfflineQueue, command.options.maxRetriesPerRequest, command.options.commandTimeout]).toEqual([false, 0, 50]);
    expect([worker.options.enableOfflineQueue, worker.options.maxRetriesPerRequest]).toEqual([true, null]);
    expect(clusterWorker.options.redisOptions?.maxRetriesPerRequest).toBeNull();
    await Promise.all([command, worker, clusterWorker].map(closeRedisConnection));
  });
});
