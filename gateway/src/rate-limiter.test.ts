import { createLogger } from '@platform/core';
import { Redis } from 'ioredis';
import { FailoverLimiter, MemorySlidingWindow, rateLimitHeaders, type LimitResult } from './rate-limiter';
import { maxInAnyWindow } from './test/windows';

describe('in-memory sliding window', () => {
  test('accepts exactly the limit in a window, then rejects without counting the rejections', () => {
    let now = 1_000_000;
    const limiter = new MemorySlidingWindow(60_000, () => now);
    const results: LimitResult[] = [];
    for (let i = 0; i < 5; i++) {
      results.push(limiter.hit('k', 3));
      if (i < 2) now += 1_000;
    }
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false, false]);
    expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0, 0]);
    // The first request leaves the window 60 s after it was accepted; the rejections added nothing.
    now = 1_000_000 + 59_999;
    expect(limiter.hit('k', 3).allowed).toBe(false);
    now = 1_000_000 + 60_000;
    expect(limiter.hit('k', 3)).toMatchObject({ allowed: true, remaining: 0, resetMs: 1_000_000 + 61_000 });
    expect(limiter.hit('k', 3).allowed).toBe(false);
  });

  test('reset is now while requests remain, else the moment the oldest counted request leaves the window', () => {
    let now = 5_000;
    const limiter = new MemorySlidingWindow(60_000, () => now);
    expect(limiter.hit('k', 2)).toMatchObject({ remaining: 1, resetMs: 5_000 });
    now = 6_000;
    expect(limiter.hit('k', 2)).toMatchObject({ remaining: 0, resetMs: 65_000 });
    now = 7_000;
    expect(limiter.hit('k', 2)).toMatchObject({ allowed: false, resetMs: 65_000 });
  });

  test('keys are counted separately', () => {
    const limiter = new MemorySlidingWindow(60_000, () => 0);
    expect(limiter.hit('a', 1).allowed).toBe(true);
    expect(limiter.hit('b', 1).allowed).toBe(true);
    expect(limiter.hit('a', 1).allowed).toBe(false);
  });

  test('under random bursts no rolling 60 s window accepts more than the limit, and the limiter is not stingier than that', () => {
    let now = 0;
    const limiter = new MemorySlidingWindow(60_000, () => now);
    const accepted: number[] = [];
    let seed = 42;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20_000; i++) {
      now += random() < 0.05 ? Math.floor(random() * 20_000) : Math.floor(random() * 50);
      const result = limiter.hit('k', 37);
      if (result.allowed) accepted.push(now);
      // A rejection happens only when the window really holds the limit.
      else expect(accepted.filter((t) => t > now - 60_000)).toHaveLength(37);
    }
    expect(maxInAnyWindow(accepted, 60_000)).toBe(37);
  });

  test('sweep forgets keys whose requests all left the window', () => {
    let now = 0;
    const limiter = new MemorySlidingWindow(1_000, () => now);
    limiter.hit('a', 5);
    now = 500;
    limiter.hit('b', 5);
    now = 1_200;
    limiter.sweep();
    expect(limiter.keys).toBe(1);
  });
});

describe('rate-limit headers (contract section 6)', () => {
  const base: LimitResult = { allowed: true, limit: 10, remaining: 4, resetMs: 1_700_000_000_500, nowMs: 1_700_000_000_500 };

  test('Reset is now, in whole epoch seconds, while requests remain', () => {
    expect(rateLimitHeaders(base)).toEqual({ 'X-RateLimit-Limit': '10', 'X-RateLimit-Remaining': '4', 'X-RateLimit-Reset': '1700000000' });
  });

  test('with nothing left Reset is the epoch second at which one more request is accepted', () => {
    expect(rateLimitHeaders({ ...base, remaining: 0, resetMs: 1_700_000_030_200 })['X-RateLimit-Reset']).toBe('1700000031');
  });

  test('a rejection carries Retry-After in whole seconds, at least 1', () => {
    expect(rateLimitHeaders({ ...base, allowed: false, remaining: 0, resetMs: base.nowMs + 12_300 })['Retry-After']).toBe('13');
    expect(rateLimitHeaders({ ...base, allowed: false, remaining: 0, resetMs: base.nowMs + 20 })['Retry-After']).toBe('1');
  });
});

describe('failover limiter', () => {
  test('uses the in-memory limiter while the Redis connection is not ready, and reports it', async () => {
    const redis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false });
    const primary = { hit: jest.fn() };
    const limiter = new FailoverLimiter(redis, primary, new MemorySlidingWindow(), createLogger('test', 'silent'));
    expect((await limiter.hit('k', 1)).allowed).toBe(true);
    expect((await limiter.hit('k', 1)).allowed).toBe(false);
    expect(primary.hit).not.toHaveBeenCalled();
    expect(limiter.state()).toMatchObject({ mode: 'memory', memoryDecisions: 2 });
    redis.disconnect();
  });

  test('when Redis times out, the fallback starts from what Redis had counted: a used-up bucket stays closed, a part-used one gives only the rest', async () => {
    const ready = { status: 'ready' } as unknown as Redis;
    const now = Date.now();
    const answers: Record<string, LimitResult> = {
      spent: { allowed: true, limit: 3, remaining: 0, resetMs: now + 50_000, nowMs: now },
      half: { allowed: true, limit: 4, remaining: 2, resetMs: now, nowMs: now },
    };
    let redisUp = true;
    const primary = {
      hit: jest.fn(async (key: string) => {
        if (!redisUp) throw new Error('Command timed out');
        return answers[key]!;
      }),
    };
    const limiter = new FailoverLimiter(ready, primary, new MemorySlidingWindow(), createLogger('test', 'silent'), 0);
    await limiter.hit('spent', 3);
    await limiter.hit('half', 4);
    redisUp = false;
    expect(await limiter.hit('spent', 3)).toMatchObject({ allowed: false, limit: 3, remaining: 0, resetMs: now + 50_000 });
    expect((await limiter.hit('half', 4)).remaining).toBe(1);
    expect((await limiter.hit('half', 4)).allowed).toBe(true);
    expect((await limiter.hit('half', 4)).allowed).toBe(false);
    // A key Redis never answered for gets the whole limit from memory.
    expect((await limiter.hit('fresh', 2)).remaining).toBe(1);
    expect(limiter.state().mode).toBe('memory');
  });
});
