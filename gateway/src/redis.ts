import { Redis } from 'ioredis';
import type { Logger } from '@platform/core';

/** Key prefix of everything the gateway keeps in Redis; tests pass their own so they never share data. */
export const DEFAULT_REDIS_PREFIX = 'platform:gateway:';

/** Reconnect quickly so the limiter is back on Redis soon after Redis returns. */
const RECONNECT_MAX_DELAY_MS = 1_000;

/**
 * The gateway's command connection. Redis must never stall a request: no offline queue (a
 * command while disconnected fails at once) and a 100 ms command timeout; callers fall back
 * to per-instance state on any error.
 */
export function createRedis(url: string, logger: Logger, name = 'gateway'): Redis {
  const redis = new Redis(url, {
    connectionName: name,
    enableOfflineQueue: false,
    commandTimeout: 100,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 100, RECONNECT_MAX_DELAY_MS),
  });
  watchConnection(redis, logger, name);
  return redis;
}

/** The pub/sub connection (a subscribed connection cannot run other commands). */
export function createSubscriber(url: string, logger: Logger, name = 'gateway-subscriber'): Redis {
  const redis = new Redis(url, {
    connectionName: name,
    enableOfflineQueue: false,
    // Subscriptions are renewed on every `ready` by the revocation listener, which also resyncs the cache.
    autoResubscribe: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 100, RECONNECT_MAX_DELAY_MS),
  });
  watchConnection(redis, logger, name);
  return redis;
}

function watchConnection(redis: Redis, logger: Logger, name: string): void {
  let down = false;
  redis.on('error', (err: Error) => {
    // ioredis reports every failed reconnect; one line per outage is enough.
    if (!down) logger.warn({ err: err.message, connection: name }, 'redis unavailable');
    down = true;
  });
  redis.on('ready', () => {
    if (down) logger.info({ connection: name }, 'redis available again');
    down = false;
  });
}

/** Closes a connection whether or not it is connected. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  try {
    if (redis.status === 'ready') await redis.quit();
    else redis.disconnect();
  } catch {
    redis.disconnect();
  }
}
