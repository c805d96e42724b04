import { Redis } from 'ioredis';

/** `*`, `?`, `[`, `]` and `\` taken literally in a SCAN MATCH pattern. */
function globLiteral(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

async function withRedis<T>(redisUrl: string, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await fn(redis);
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

/** Every key under `<prefix>:` (a BullMQ queue prefix) in the Redis at `redisUrl`. */
export async function redisKeys(prefix: string, redisUrl: string): Promise<string[]> {
  return withRedis(redisUrl, async (redis) => {
    const found: string[] = [];
    await scanKeys(redis, prefix, async (keys) => found.push(...keys));
    return found.sort();
  });
}

/**
 * Deletes every key under `<prefix>:`: what a test launcher does when it closes, after its
 * queues and workers are closed, so a test leaves nothing behind in Redis. Returns how many.
 */
export async function deleteRedisKeys(prefix: string, redisUrl: string): Promise<number> {
  return withRedis(redisUrl, async (redis) => {
    let deleted = 0;
    await scanKeys(redis, prefix, async (keys) => (deleted += await redis.unlink(...keys)));
    return deleted;
  });
}
