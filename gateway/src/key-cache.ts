import type { QuotaLimits } from '@platform/core';
import type { CrossWorkspaceKeysStore, KeyWithQuotas, RateLimits } from './keys.store';
import { resolveQuotas } from './quotas.service';

/** What the hot path needs to know about a key. */
export interface CachedKey {
  id: string;
  workspaceId: string;
  scopes: readonly string[] | null;
  expiresAt: number | null;
  revokedAt: number | null;
  /** The key's own limits; null = the platform's. */
  rateLimits: RateLimits | null;
  /**
   * Its workspace's quotas in force (contract section 20), read with the key: signed into every
   * proxied request for the services, and `idempotency_bytes` for the gateway's idempotency records.
   */
  quotas: QuotaLimits;
}

/** The hot path's record of a key, its workspace's quotas resolved against the platform defaults. */
export function cachedKey({ key, quotas }: KeyWithQuotas, quotaDefaults: QuotaLimits): CachedKey {
  return {
    id: key.id,
    workspaceId: key.workspaceId,
    scopes: key.scopes,
    expiresAt: key.expiresAt?.getTime() ?? null,
    revokedAt: key.revokedAt?.getTime() ?? null,
    rateLimits: key.rateLimits,
    quotas: resolveQuotas(quotas, quotaDefaults),
  };
}

/** The key cache's lookup: one query for the key and its workspace's quotas. */
export function keyLookup(
  store: Pick<CrossWorkspaceKeysStore, 'findApiKeyByTokenHash'>,
  quotaDefaults: QuotaLimits,
): (tokenHash: string) => Promise<CachedKey | null> {
  return async (tokenHash) => {
    const found = await store.findApiKeyByTokenHash(tokenHash);
    return found ? cachedKey(found, quotaDefaults) : null;
  };
}

export interface KeyCacheOptions {
  /** Backstop for a missed revocation message: a cached key is re-read after this long. */
  ttlMs: number;
  /** Unknown hashes are remembered this long, so a repeated bad token costs no query. */
  negativeTtlMs: number;
  maxEntries: number;
}

export const DEFAULT_KEY_CACHE_OPTIONS: KeyCacheOptions = { ttlMs: 30_000, negativeTtlMs: 5_000, maxEntries: 100_000 };

interface Entry {
  key: CachedKey | null;
  until: number;
}

/**
 * Token hash → key, so a request costs no database query once its key is cached. Concurrent
 * misses for one hash share a single lookup.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<CachedKey | null>>();
  // Bumped by every eviction: a lookup that began before it may have read the key before it was
  // revoked, so its answer is used once but not cached.
  private generation = 0;

  constructor(
    private readonly lookup: (tokenHash: string) => Promise<CachedKey | null>,
    private readonly options: KeyCacheOptions = DEFAULT_KEY_CACHE_OPTIONS,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  find(tokenHash: string): CachedKey | null | Promise<CachedKey | null> {
    const entry = this.entries.get(tokenHash);
    if (entry && entry.until > this.now()) return entry.key;
    const pending = this.inFlight.get(tokenHash);
    if (pending) return pending;
    const generation = this.generation;
    const lookup = this.lookup(tokenHash)
      .then((key) => {
        if (generation === this.generation) this.store(tokenHash, key);
        return key;
      })
      .finally(() => this.inFlight.delete(tokenHash));
    this.inFlight.set(tokenHash, lookup);
    return lookup;
  }

  evict(tokenHash: string): void {
    this.generation++;
    this.entries.delete(tokenHash);
    this.inFlight.delete(tokenHash);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.inFlight.clear();
  }

  private store(tokenHash: string, key: CachedKey | null): void {
    if (this.entries.size >= this.options.maxEntries) {
      // Map order is insertion order: drop the oldest entry.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.delete(tokenHash);
    this.entries.set(tokenHash, { key, until: this.now() + (key ? this.options.ttlMs : this.options.negativeTtlMs) });
  }
}
