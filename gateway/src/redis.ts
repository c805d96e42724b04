import { closeRedisConnection, createRedisConnection, DEFAULT_QUEUE_PREFIX, type Logger, type RedisConnection, type RedisTargetLike } from '@platform/core';

/**
 * Key prefix of everything the gateway keeps in Redis (limits, idempotency records, the key-change
 * channel): `<QUEUE_PREFIX>:gateway:`, so platforms sharing a Redis share none of it. A hash tag's
 * braces are dropped: the gateway's keys must spread over every Cluster master (they hash by key,
 * IP or workspace), not all land in the prefix's one slot.
 */
export function gatewayRedisPrefix(queuePrefix: string): string {
  return `${queuePrefix.replace(/[{}]/g, '')}:gateway:`;
}

/** `platform:gateway:`, the prefix under the default QUEUE_PREFIX; tests pass their own so they never share data. */
export const DEFAULT_REDIS_PREFIX = gatewayRedisPrefix(DEFAULT_QUEUE_PREFIX);

/**
 * REDIS_COMMAND_TIMEOUT_MS's default: a Redis that has not answered a command within 100 ms is
 * treated as down for that request, which then goes on without it (contract section 6: a short
 * command timeout, e.g. 100 ms).
 */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 100;

/**
 * The gateway's command connection. Redis must never stall a request: no offline queue (a
 * command while disconnected fails at once) and a command timeout (REDIS_COMMAND_TIMEOUT_MS);
 * callers fall back to per-instance state on any error.
 */
export function createRedis(target: RedisTargetLike, logger: Logger, name = 'gateway', commandTimeoutMs = DEFAULT_REDIS_COMMAND_TIMEOUT_MS): RedisConnection {
  return createRedisConnection(target, { name, role: 'command', commandTimeoutMs, logger });
}

/**
 * The pub/sub connection (a subscribed connection cannot run other commands). Subscriptions are
 * renewed on every `ready` by the key-change listener, which also resyncs the cache.
 */
export function createSubscriber(target: RedisTargetLike, logger: Logger, name = 'gateway-subscriber'): RedisConnection {
  return createRedisConnection(target, { name, role: 'subscriber', logger });
}

/** Closes a connection whether or not it is connected. */
export const closeRedis = closeRedisConnection;
