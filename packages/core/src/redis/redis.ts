import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Logger } from '../process/logger';
import { toRedisTarget, type RedisTargetLike } from './redis-config';

// The connections themselves; the variables and topologies are in redis-config.ts, which loads no
// ioredis (config.ts imports it, and tracing must patch ioredis before anything loads it).

/** Any connection the factory makes: one server's client (standalone or Sentinel) or a cluster client. */
export type RedisConnection = Redis | Cluster;

/**
 * What a connection is for, which decides how it behaves while Redis is away:
 * - `command`: the gateway's hot path: never waits (no offline queue, no retry, a command timeout);
 *   callers fall back to per-instance state.
 * - `subscriber`: pub/sub; its owner subscribes again on every `ready`.
 * - `producer`: enqueues and reads a queue; fails fast (no offline queue, one try), so an API
 *   answers 503 at once instead of holding a request.
 * - `worker`: a BullMQ worker's connection: waits for Redis, commands retried until it is back
 *   (`maxRetriesPerRequest: null`, as BullMQ requires of blocking connections).
 */
export type RedisRole = 'command' | 'subscriber' | 'producer' | 'worker';

export interface RedisConnectionOptions {
  /** CLIENT SETNAME and the connection's name in logs. */
  name: string;
  role: RedisRole;
  /** `command` only: a command without an answer this long fails (default 100 ms). */
  commandTimeoutMs?: number;
  /** One `redis unavailable` line per outage and one `redis available again`; silent without. */
  logger?: Logger;
  /** Default false: the gateway's subscriber renews its subscriptions itself on every `ready`. */
  autoResubscribe?: boolean;
}

/**
 * Reconnect attempts back off to at most a second, so a process is back on Redis within about a
 * second of it answering again (contract section 17: within 15 s of a promotion).
 */
const RECONNECT_MAX_DELAY_MS = 1_000;
const reconnectDelay = (times: number): number => Math.min(times * 100, RECONNECT_MAX_DELAY_MS);
const CONNECT_TIMEOUT_MS = 2_000;

function roleOptions(options: RedisConnectionOptions): RedisOptions {
  switch (options.role) {
    case 'command':
      return { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: options.commandTimeoutMs ?? 100 };
    case 'subscriber':
      return { enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResubscribe: options.autoResubscribe ?? false };
    case 'producer':
      return { enableOfflineQueue: false, maxRetriesPerRequest: 1 };
    case 'worker':
      return { enableOfflineQueue: true, maxRetriesPerRequest: null };
  }
}

/** A sentinel that accepts a connection and then says nothing must not hold a reconnect up: the next one is asked. */
const SENTINEL_COMMAND_TIMEOUT_MS = 2_000;

/**
 * Makes a client of the master the sentinels name end only when its owner closes it.
 *
 * ioredis 6 leaves a Sentinel client ended for good, every command failing "Connection is closed.",
 * when its failover detector (a sentinel's +switch-master) disconnects it while it is still asking the
 * sentinels for the master after losing the old one: the connect in flight rejects and the client
 * goes to `end` without a retry. The Sentinel drill met it: after a promotion, the events service's
 * webhook producer, or a gateway's command connection (every Idempotency-Key a 503), never came back.
 * Such a client connects again after an `end` its owner did not ask for (quit or disconnect); its
 * duplicates (BullMQ's blocking connections) are kept alive the same way. Its quit also closes the
 * failover detector, whichever owner quits it (closeRedisConnection, BullMQ).
 */
export function keptAlive(client: Redis, onRevive?: () => void): Redis {
  let closedByOwner = false;
  const disconnect = client.disconnect.bind(client);
  const quit = client.quit.bind(client);
  const duplicate = client.duplicate.bind(client);
  client.disconnect = (reconnect = false) => {
    if (!reconnect) closedByOwner = true;
    disconnect(reconnect);
  };
  // A quit leaves the failover detector's subscriptions to every sentinel open (retrying for ever once
  // the sentinels go); only a disconnect closes them.
  client.quit = (...args) => {
    closedByOwner = true;
    return quit(...args).finally(() => disconnect());
  };
  client.duplicate = (override?: Partial<RedisOptions>) => keptAlive(duplicate(override), onRevive);
  // An owner that closed it and connects it again (BullMQ does so with its blocking connections) has it kept alive again.
  client.on('ready', () => {
    closedByOwner = false;
  });
  client.on('end', () => {
    if (closedByOwner) return;
    setTimeout(() => {
      if (closedByOwner || client.status !== 'end') return;
      onRevive?.();
      client.connect().catch(() => undefined);
    }, RECONNECT_MAX_DELAY_MS).unref();
  });
  return client;
}

/** A master demoted by a failover answers writes with READONLY: reconnect, which finds the new one. */
const reconnectOnReadonly = (err: Error): boolean | 1 | 2 => (err.message.startsWith('READONLY') ? 2 : false);

/** A connection of the given role to the process's Redis, whatever its topology. */
export function createRedisConnection(target: RedisTargetLike, options: RedisConnectionOptions): RedisConnection {
  const { topology, username, password } = toRedisTarget(target);
  const { enableOfflineQueue, ...perCommand } = roleOptions(options);
  const common: RedisOptions = {
    connectionName: options.name,
    connectTimeout: CONNECT_TIMEOUT_MS,
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...perCommand,
  };
  let connection: RedisConnection;
  if (topology.kind === 'cluster') {
    const clusterOptions: ClusterOptions = {
      enableOfflineQueue,
      clusterRetryStrategy: reconnectDelay,
      // Slots move only on failover or resharding: look again soon after a node fails, and every 5 s.
      slotsRefreshTimeout: CONNECT_TIMEOUT_MS,
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 200,
      retryDelayOnTryAgain: 100,
      scaleReads: 'master',
      redisOptions: { ...common, reconnectOnError: reconnectOnReadonly },
    };
    connection = new Cluster(topology.nodes, clusterOptions);
  } else if (topology.kind === 'sentinel') {
    connection = keptAlive(
      new Redis({
        ...common,
        enableOfflineQueue,
        sentinels: topology.sentinels,
        name: topology.masterName,
        // Told of a failover by the sentinels (+switch-master) instead of waiting for the old master's socket to fail.
        failoverDetector: true,
        sentinelCommandTimeout: SENTINEL_COMMAND_TIMEOUT_MS,
        sentinelRetryStrategy: reconnectDelay,
        retryStrategy: reconnectDelay,
        reconnectOnError: reconnectOnReadonly,
      }),
      () =>
        options.logger?.warn({ connection: options.name }, 'redis connection ended without being closed (a failover notice mid-reconnect); connecting again'),
    );
  } else {
    connection = new Redis(topology.url, { ...common, enableOfflineQueue, retryStrategy: reconnectDelay, reconnectOnError: reconnectOnReadonly });
  }
  if (options.logger) watchRedisConnection(connection, options.logger, options.name);
  else connection.on('error', () => undefined);
  return connection;
}

/** Logs one line when a connection loses Redis and one when it is back (ioredis reports every failed retry). */
export function watchRedisConnection(redis: RedisConnection, logger: Logger, name: string): void {
  let down = false;
  redis.on('error', (err: Error) => {
    if (!down) logger.warn({ err: err.message, connection: name }, 'redis unavailable');
    down = true;
  });
  redis.on('ready', () => {
    if (down) logger.info({ connection: name }, 'redis available again');
    down = false;
  });
}

/** A new connection like `redis` (same topology, options and credentials), e.g. a subscriber beside a worker's connection. */
export function duplicateRedisConnection(redis: RedisConnection): RedisConnection {
  return redis instanceof Cluster ? redis.duplicate() : redis.duplicate();
}

/** Whether a connection can take a command now (a cluster client once it knows the slots). */
export function redisReady(redis: RedisConnection): boolean {
  return redis.status === 'ready';
}

/** Closes a connection whether or not it is connected; never throws. */
export async function closeRedisConnection(redis: RedisConnection): Promise<void> {
  if (redis.status === 'end') return;
  try {
    if (redis.status === 'ready') await redis.quit();
    else redis.disconnect();
  } catch {
    redis.disconnect();
  }
}
