import type { Redis } from 'ioredis';
import type { Logger } from '@platform/core';

/** The pub/sub channel on which a revocation reaches every gateway instance. */
export function revocationChannel(redisPrefix: string): string {
  return `${redisPrefix}api-key-revocations`;
}

export interface RevocationMessage {
  key_id: string;
  token_hash: string;
}

export interface RevocationPublisher {
  publish(message: RevocationMessage): Promise<void>;
}

export function redisRevocationPublisher(redis: Redis, redisPrefix: string): RevocationPublisher {
  const channel = revocationChannel(redisPrefix);
  return {
    async publish(message) {
      await redis.publish(channel, JSON.stringify(message));
    },
  };
}

function parseMessage(raw: string): RevocationMessage | undefined {
  try {
    const value = JSON.parse(raw) as Partial<RevocationMessage>;
    return typeof value.token_hash === 'string' && typeof value.key_id === 'string' ? (value as RevocationMessage) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Listens for revocations on a dedicated subscriber connection. Every (re)subscription calls
 * `onResync` first: revocations published while this instance was not listening are lost, so
 * the cache must be refilled from the database.
 */
export function listenForRevocations(
  subscriber: Redis,
  redisPrefix: string,
  handlers: { onRevoked: (message: RevocationMessage) => void; onResync: () => void },
  logger: Logger,
): () => void {
  const channel = revocationChannel(redisPrefix);
  const subscribe = (): void => {
    subscriber
      .subscribe(channel)
      .then(() => handlers.onResync())
      .catch((err: Error) => logger.warn({ err: err.message }, 'could not subscribe to key revocations'));
  };
  const onMessage = (from: string, raw: string): void => {
    if (from !== channel) return;
    const message = parseMessage(raw);
    if (message) handlers.onRevoked(message);
    else logger.warn({ channel }, 'ignored a malformed revocation message');
  };
  subscriber.on('ready', subscribe);
  subscriber.on('message', onMessage);
  if (subscriber.status === 'ready') subscribe();
  return () => {
    subscriber.off('ready', subscribe);
    subscriber.off('message', onMessage);
    if (subscriber.status === 'ready') subscriber.unsubscribe(channel).catch(() => undefined);
  };
}
