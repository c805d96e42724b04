import { DEFAULT_QUOTA_LIMITS } from '@platform/core';
import { KeyCache, type CachedKey } from './key-cache';

const key: CachedKey = { id: 'k1', workspaceId: 'w1', scopes: null, expiresAt: null, revokedAt: null, rateLimits: null, quotas: DEFAULT_QUOTA_LIMITS };

function setup() {
  let now = 0;
  const lookup = jest.fn(async (hash: string) => (hash === 'known' ? key : null));
  const cache = new KeyCache(lookup, { ttlMs: 30_000, negativeTtlMs: 5_000, maxEntries: 3 }, () => now);
  return { cache, lookup, advance: (ms: number) => (now += ms) };
}

test('a cached key is answered without another lookup until its TTL passes', async () => {
  const { cache, lookup, advance } = setup();
  expect(await cache.find('known')).toBe(key);
  expect(cache.find('known')).toBe(key);
  advance(29_999);
  expect(cache.find('known')).toBe(key);
  expect(lookup).toHaveBeenCalledTimes(1);
  advance(1);
  await cache.find('known');
  expect(lookup).toHaveBeenCalledTimes(2);
});

test('unknown hashes are remembered for the short negative TTL', async () => {
  const { cache, lookup, advance } = setup();
  expect(await cache.find('nope')).toBeNull();
  expect(cache.find('nope')).toBeNull();
  advance(5_000);
  await cache.find('nope');
  expect(lookup).toHaveBeenCalledTimes(2);
});

test('concurrent misses share one lookup', async () => {
  const { cache, lookup } = setup();
  await Promise.all([cache.find('known'), cache.find('known'), cache.find('known')]);
  expect(lookup).toHaveBeenCalledTimes(1);
});

test('evict drops the key, and a lookup that began before the eviction is not cached', async () => {
  const { cache, lookup } = setup();
  const pending = cache.find('known');
  cache.evict('known');
  expect(await pending).toBe(key);
  await cache.find('known');
  expect(lookup).toHaveBeenCalledTimes(2);
  cache.evict('known');
  await cache.find('known');
  expect(lookup).toHaveBeenCalledTimes(3);
});

test('the cache never holds more than maxEntries', async () => {
  const { cache } = setup();
  for (const hash of ['a', 'b', 'c', 'd', 'e']) await cache.find(hash);
  expect(cache.size).toBe(3);
});
