import type { Logger } from '@platform/core';
import type { KeysStore } from './keys.store';

/**
 * Collects `last_used_at` per key in memory and writes them in one statement per interval, so a
 * request never waits for (or causes) a database write.
 */
export class LastUsedRecorder {
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<KeysStore, 'touchLastUsed'>,
    private readonly logger: Logger,
    private readonly intervalMs = 5_000,
  ) {}

  start(): this {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs).unref();
    return this;
  }

  mark(keyId: string, at = Date.now()): void {
    this.pending.set(keyId, at);
  }

  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.store.touchLastUsed([...batch].map(([keyId, at]) => ({ keyId, usedAt: new Date(at) })));
    } catch (err) {
      this.logger.warn({ err }, 'could not record last use of API keys; will retry');
      for (const [keyId, at] of batch) if (!this.pending.has(keyId)) this.pending.set(keyId, at);
    }
  }
}
