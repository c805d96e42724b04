import type { Logger, RedisConnection } from '@platform/core';

/**
 * The pub/sub channel on which a key's revocation, edit or roll reaches every gateway instance,
 * which drops the key from its cache and reads it again on its next request. The name predates
 * edits and rolls; it stays so instances of different versions hear each other during a deploy.
 */
export function keyChangeChannel(redisPrefix: string): string {
  return `${redisPrefix}api-key-revocations`;
}

export interface KeyChangeMessage {
  key_id: string;
  token_hash: string;
}

export interface KeyChangePublisher {
  publish(message: KeyChangeMessage): Promise<void>;
}

export function redisKeyChangePublisher(redis: RedisConnection, redisPrefix: string): KeyChangePublisher {
  const channel = keyChangeChannel(redisPrefix);
  return {
    async publish(message) {
      await redis.publish(channel, JSON.stringify(message));
    },
  };
}

function parseMessage(raw: string): KeyChangeMessage | undefined {
  try {
    const value = JSON.parse(raw) as Partial<KeyChangeMessage>;
    return typeof value.token_hash === 'string' && typeof value.key_id === 'string' ? (value as KeyChangeMessage) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Listens for key changes on a dedicated subscriber connection. Every (re)subscription calls
 * `onResync` first: changes published while this instance was not listening are lost, so
 * the cache must be refilled from the database.
 */
export function listenForKeyChanges(
  subscriber: RedisConnection,
  redisPrefix: string,
  handlers: { onChanged: (message: KeyChangeMessage) => void; onResync: () => void },
  logger: Logger,
): () => void {
  const channel = keyChangeChannel(redisPrefix);
  const subscribe = (): void => {
    subscriber
      .subscribe(channel)
      .then(() => handlers.onResync())
      .catch((err: Error) => logger.warn({ err: err.message }, 'could not subscribe to key changes'));
  };
  const onMessage = (from: string, raw: string): void => {
    if (from !== channel) return;
    const message = parseMessage(raw);
    if (message) handlers.onChanged(message);
    else logger.warn({ channel }, 'ignored a malformed key change message');
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
