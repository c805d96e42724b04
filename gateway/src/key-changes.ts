import type { Logger, RedisConnection } from '@platform/core';
import type { CrossWorkspaceKeysStore, KeyChange } from './keys.store';

/*
 * A key's revocation, edit or roll reaches every gateway instance, which drops the key from its
 * cache and reads it again on its next request, by two paths:
 * - the key-change log (api_key_changes), written in the change's own transaction and read by every
 *   instance every GATEWAY_KEY_CHANGES_POLL_MS: the path that always arrives (contract: within 1 s);
 * - a pub/sub message, the fast path: usually there before the next poll, but a publish that fails
 *   or times out is lost and nothing depends on it.
 */

/**
 * The pub/sub channel of key changes. The name predates edits and rolls; it stays so instances of
 * different versions hear each other during a deploy.
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

/** How long log rows are kept: far longer than any reader goes between two polls it survives. */
export const KEY_CHANGE_RETENTION_MS = 10 * 60_000;

export interface KeyChangeFeedOptions {
  /** Pause between two reads of the log. */
  pollMs: number;
  /** Rows read at most per query (a full batch is followed by another read at once). */
  batch: number;
  retentionMs: number;
  /** How often this instance deletes rows past the retention (every instance does; they skip each other's rows). */
  pruneEveryMs: number;
}

export const DEFAULT_KEY_CHANGE_FEED_OPTIONS: KeyChangeFeedOptions = {
  pollMs: 250,
  batch: 1_000,
  retentionMs: KEY_CHANGE_RETENTION_MS,
  pruneEveryMs: 60_000,
};

/**
 * Where a reader of the log stands. Rows are ordered by their transaction's id, not by `seq`: a
 * `seq` is taken when a row is inserted and its transaction may commit after one holding a higher
 * `seq` (or never), so "everything up to seq N" can never be known. A transaction id below the xmin
 * of a snapshot can: that transaction has ended, so its rows are in the snapshot or will never exist.
 */
export interface FeedPosition {
  /** Every row whose txid is below this has been applied. */
  horizon: bigint;
  /** Rows at or above the horizon already applied (seq → txid and when it was read): committed while an older transaction was still open. */
  seen: ReadonlyMap<bigint, { txid: bigint; readAt: number }>;
}

/**
 * The position after applying `changes`, read from `position` in (txid, seq) order with at most
 * `limit` rows, in a snapshot whose xmin was `xmin`. A full batch moves the horizon only up to its
 * last row's transaction; rows it returned at or above the new horizon are remembered so the next
 * read skips them. Remembered rows older than `forgetAfterMs` are dropped (the log has deleted them;
 * were one still there, it would be applied again, which only costs a cache miss).
 */
export function nextFeedPosition(
  position: FeedPosition,
  read: { changes: readonly KeyChange[]; xmin: bigint },
  limit: number,
  now: number,
  forgetAfterMs: number,
): FeedPosition {
  let horizon = read.xmin;
  const last = read.changes.at(-1);
  if (read.changes.length >= limit && last && last.txid < horizon) horizon = last.txid;
  if (horizon < position.horizon) horizon = position.horizon;
  const seen = new Map<bigint, { txid: bigint; readAt: number }>();
  for (const [seq, entry] of position.seen) if (entry.txid >= horizon && now - entry.readAt <= forgetAfterMs) seen.set(seq, entry);
  for (const change of read.changes) if (change.txid >= horizon) seen.set(change.seq, { txid: change.txid, readAt: now });
  return { horizon, seen };
}

/**
 * Follows the key-change log: reads it every `pollMs` and calls `onChanged` for each row. Starting
 * (and after losing the database for half the retention, when rows it never read may be gone) it
 * takes the current horizon and calls `onResync` first: keys cached before then may be older than
 * any change it will read. Also deletes rows past the retention now and then.
 */
export class KeyChangeFeed {
  private position: FeedPosition | undefined;
  private lastRead = 0;
  private lastPrune: number;
  private failing = false;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly options: KeyChangeFeedOptions;

  constructor(
    private readonly store: Pick<CrossWorkspaceKeysStore, 'keyChangesHorizon' | 'readKeyChanges' | 'pruneKeyChanges'>,
    private readonly handlers: { onChanged: (change: KeyChange) => void; onResync: () => void },
    private readonly logger: Logger,
    options: Partial<KeyChangeFeedOptions> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.options = { ...DEFAULT_KEY_CHANGE_FEED_OPTIONS, ...options };
    this.lastPrune = now();
  }

  /** Reads the log now, then every `pollMs`. */
  start(): this {
    if (!this.closed && this.timer === undefined) this.schedule(0);
    return this;
  }

  /** One read of the log (and a prune when due); never throws. Calls made while one runs wait for it. */
  poll(): Promise<void> {
    // read() handles the store's failures; this keeps anything else from stopping every later read.
    this.polling = this.polling.then(() => this.read()).catch((err: unknown) => this.logger.error({ err }, 'key-change log read failed'));
    return this.polling;
  }

  /** Stops polling; resolves when a read in progress has ended. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.polling;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      void this.poll().then(() => {
        if (!this.closed) this.schedule(this.options.pollMs);
      });
    }, delayMs).unref();
  }

  private async read(): Promise<void> {
    if (this.closed) return;
    const { batch, retentionMs } = this.options;
    try {
      if (this.position && this.now() - this.lastRead > retentionMs / 2) {
        this.logger.warn({ since_ms: this.now() - this.lastRead }, 'key-change log not read for long: starting over from the current horizon');
        this.position = undefined;
      }
      if (!this.position) {
        this.position = { horizon: await this.store.keyChangesHorizon(), seen: new Map() };
        this.lastRead = this.now();
        this.handlers.onResync();
      }
      for (;;) {
        const read = await this.store.readKeyChanges(this.position.horizon, [...this.position.seen.keys()], batch);
        for (const change of read.changes) this.handlers.onChanged(change);
        this.position = nextFeedPosition(this.position, read, batch, this.now(), retentionMs + this.options.pruneEveryMs);
        this.lastRead = this.now();
        if (read.changes.length < batch || this.closed) break;
      }
      if (this.failing) this.logger.info('key-change log readable again');
      this.failing = false;
    } catch (err) {
      // One line per outage: the poll runs four times a second.
      if (!this.failing) this.logger.warn({ err }, 'could not read the key-change log; retrying');
      this.failing = true;
      return;
    }
    await this.prune();
  }

  private async prune(): Promise<void> {
    if (this.now() - this.lastPrune < this.options.pruneEveryMs) return;
    this.lastPrune = this.now();
    try {
      await this.store.pruneKeyChanges(this.options.retentionMs, this.options.batch);
    } catch (err) {
      this.logger.warn({ err }, 'could not delete old key-change log rows; will retry');
    }
  }
}
