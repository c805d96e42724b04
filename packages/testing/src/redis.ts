import { Cluster, Redis } from 'ioredis';

/**
 * Where a test helper finds Redis: a `redis://` URL, or the variables a process gets for any
 * topology (`REDIS_URL`, `REDIS_CLUSTER_NODES`, or `REDIS_SENTINELS` + `REDIS_SENTINEL_MASTER`;
 * `REDIS_USERNAME`/`REDIS_PASSWORD` with any), e.g. a RedisCluster or RedisSentinel launcher itself.
 */
export type RedisLocation = string | { env: Record<string, string> };

/** `*`, `?`, `[`, `]` and `\` taken literally in a SCAN MATCH pattern. */
function globLiteral(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

const nodeList = (list: string) =>
  list.split(',').map((entry) => {
    const at = entry.lastIndexOf(':');
    return { host: entry.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(entry.slice(at + 1)) };
  });

/**
 * Calls `fn` with a connection to every master that holds keys: the one server, the master
 * Sentinel names, or each master of a cluster (a cluster's SCAN sees one node's keys only).
 */
async function withEveryMaster<T>(location: RedisLocation, fn: (redis: Redis) => Promise<T>): Promise<T[]> {
  const env = typeof location === 'string' ? { REDIS_URL: location } : location.env;
  const credentials = { ...(env.REDIS_USERNAME ? { username: env.REDIS_USERNAME } : {}), ...(env.REDIS_PASSWORD ? { password: env.REDIS_PASSWORD } : {}) };
  const options = { maxRetriesPerRequest: 1, lazyConnect: true, ...credentials };
  if (env.REDIS_CLUSTER_NODES) {
    const cluster = new Cluster(nodeList(env.REDIS_CLUSTER_NODES), { lazyConnect: true, redisOptions: options });
    cluster.on('error', () => undefined);
    try {
      await cluster.connect();
      const results: T[] = [];
      for (const master of cluster.nodes('master')) results.push(await fn(master));
      return results;
    } finally {
      cluster.disconnect();
    }
  }
  const redis = env.REDIS_SENTINELS
    ? new Redis({ ...options, sentinels: nodeList(env.REDIS_SENTINELS), name: env.REDIS_SENTINEL_MASTER })
    : new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379', options);
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return [await fn(redis)];
  } finally {
    redis.disconnect();
  }
}

async function scanKeys(redis: Redis, prefix: string, each: (keys: string[]) => Promise<unknown>): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${globLiteral(prefix)}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await each(keys);
  } while (cursor !== '0');
}

/** Every key under `<prefix>:` (a BullMQ queue prefix) in the Redis at `location`, on every master of a cluster. */
export async function redisKeys(prefix: string, location: RedisLocation): Promise<string[]> {
  const found: string[] = [];
  await withEveryMaster(location, (redis) => scanKeys(redis, prefix, async (keys) => found.push(...keys)));
  return found.sort();
}

/**
 * Deletes every key under `<prefix>:`: what a test launcher does when it closes, after its
 * queues and workers are closed, so a test leaves nothing behind in Redis. Returns how many.
 */
export async function deleteRedisKeys(prefix: string, location: RedisLocation): Promise<number> {
  const counts = await withEveryMaster(location, async (redis) => {
    let deleted = 0;
    await scanKeys(redis, prefix, async (keys) => {
      // One key a command: on a cluster, keys of several slots in one UNLINK are a CROSSSLOT error.
      const pipeline = redis.pipeline();
      for (const key of keys) pipeline.unlink(key);
      for (const [err, n] of (await pipeline.exec()) ?? []) if (!err) deleted += Number(n);
    });
    return deleted;
  });
  return counts.reduce((sum, n) => sum + n, 0);
}
