import { randomUUID } from 'node:crypto';
import type { Logger } from '@platform/core';
import type { CrossWorkspaceKeysStore, UsageCount } from './keys.store';

const HOUR_MS = 3_600_000;

/** The index in `STATUS_CLASSES` a response status counts in (contract section 16: "4xx" is every 4xx but 429). */
export function statusClassIndex(status: number): number {
  if (status === 429) return 3;
  if (status >= 500) return 4;
  if (status >= 400) return 2;
  if (status >= 300) return 1;
  return 0;
}

interface Batch {
  id: string;
  lastUsed: { keyId: string; usedAt: Date }[];
  usage: UsageCount[];
}

/**
 * What the gateway learns about keys per request (last use, requests per hour and status class),
 * kept in memory and written in one transaction per interval: a request never waits for, or
 * causes, a database write. Several gateways add up in the database.
 *
 * A flush that fails is retried with the same id (the store ignores an id it has already
 * committed), so a lost answer never counts a request twice; counts made meanwhile wait for the
 * next flush. At most one such batch is held, plus one counter per key and hour.
 */
export class KeyActivityRecorder {
  private lastUsed = new Map<string, number>();
  /** `keyId hourMs` → counts per status class. */
  private usage = new Map<string, number[]>();
  private unconfirmed: Batch | undefined;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private lastPrune = 0;

  constructor(
    private readonly store: Pick<CrossWorkspaceKeysStore, 'recordKeyActivity' | 'pruneKeyActivity'>,
    private readonly logger: Logger,
    private readonly intervalMs = 5_000,
    private readonly pruneEveryMs = HOUR_MS,
  ) {}

  start(): this {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs).unref();
    return this;
  }

  /** A request authenticated with the key (its last use). */
  used(keyId: string, at = Date.now()): void {
    this.lastUsed.set(keyId, at);
  }

  /** A request of the key answered with `status`, counted in the hour of `at`. */
  answered(keyId: string, status: number, at = Date.now()): void {
    const slot = `${keyId} ${at - (at % HOUR_MS)}`;
    let counts = this.usage.get(slot);
    if (!counts) {
      counts = [0, 0, 0, 0, 0];
      this.usage.set(slot, counts);
    }
    counts[statusClassIndex(status)]!++;
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

  private takeBatch(): Batch | undefined {
    if (this.lastUsed.size === 0 && this.usage.size === 0) return undefined;
    const batch: Batch = {
      id: randomUUID(),
      lastUsed: [...this.lastUsed].map(([keyId, at]) => ({ keyId, usedAt: new Date(at) })),
      usage: [...this.usage].map(([slot, counts]) => {
        const space = slot.indexOf(' ');
        return { keyId: slot.slice(0, space), hour: new Date(Number(slot.slice(space + 1))), counts };
      }),
    };
    this.lastUsed = new Map();
    this.usage = new Map();
    return batch;
  }

  private async write(): Promise<void> {
    const batch = this.unconfirmed ?? this.takeBatch();
    if (!batch) return;
    this.unconfirmed = batch;
    try {
      await this.store.recordKeyActivity(batch.id, batch.lastUsed, batch.usage);
    } catch (err) {
      this.logger.warn({ err }, 'could not record API key activity (last use, usage); will retry');
      return;
    }
    this.unconfirmed = undefined;
    // Counts made while an earlier batch was retried go out at once.
    if (this.lastUsed.size > 0 || this.usage.size > 0) await this.write();
    await this.prune();
  }

  private async prune(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPrune < this.pruneEveryMs) return;
    this.lastPrune = now;
    try {
      await this.store.pruneKeyActivity();
    } catch (err) {
      this.logger.warn({ err }, 'could not prune old API key usage; will retry');
    }
  }
}
