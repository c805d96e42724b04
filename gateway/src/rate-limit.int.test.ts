import { Redis } from 'ioredis';
import { testRedisUrl, uniqueName } from '@platform/testing';
import { RedisSlidingWindow, type LimitResult } from './rate-limiter';
import { maxInAnyWindow } from './test/windows';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(testRedisUrl());
});
afterAll(async () => {
  await redis.quit();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the Lua sliding window on Redis', () => {
  test('accepts exactly the limit, rejects the rest without counting them, and reports remaining and reset', async () => {
    const limiter = new RedisSlidingWindow(redis, `test:${uniqueName('lua')}:`, 60_000);
    const results: LimitResult[] = [];
    for (let i = 0; i < 6; i++) results.push(await limiter.hit('k', 4));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, false, false]);
    expect(results.map((r) => r.remaining)).toEqual([3, 2, 1, 0, 0, 0]);
    expect(results[0]!.resetMs).toBe(results[0]!.nowMs);
    // With nothing left, reset is when the first accepted request leaves the window.
    expect(results[3]!.resetMs).toBeCloseTo(results[0]!.nowMs + 60_000, 3);
    expect(results[5]!.resetMs).toBeCloseTo(results[0]!.nowMs + 60_000, 3);
    // Redis TIME, not this process's clock, but the two agree closely on this machine.
    expect(Math.abs(results[0]!.nowMs - Date.now())).toBeLessThan(2_000);
  });

  test('only accepted requests are stored, and the key expires with the window', async () => {
    const prefix = `test:${uniqueName('lua')}:`;
    const limiter = new RedisSlidingWindow(redis, prefix, 60_000);
    for (let i = 0; i < 10; i++) await limiter.hit('k', 3);
    expect(await redis.zcard(`${prefix}k`)).toBe(3);
    const ttl = await redis.pttl(`${prefix}k`);
    expect(ttl).toBeGreaterThan(59_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  test('concurrent callers never get more than the limit accepted in any rolling window', async () => {
    const limiter = new RedisSlidingWindow(redis, `test:${uniqueName('lua')}:`, 400);
    const accepted: number[] = [];
    const deadline = Date.now() + 1_500;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < deadline) {
          const result = await limiter.hit('k', 5);
          if (result.allowed) accepted.push(result.nowMs);
          await sleep(Math.random() * 15);
        }
      }),
    );
    expect(maxInAnyWindow(accepted, 400)).toBe(5);
    // The window slides: over 1.5 s of steady demand clearly more than one window's worth got through.
    expect(accepted.length).toBeGreaterThanOrEqual(15);
  });

  test('after the window a full limit is accepted again', async () => {
    const limiter = new RedisSlidingWindow(redis, `test:${uniqueName('lua')}:`, 300);
    for (let i = 0; i < 3; i++) expect((await limiter.hit('k', 3)).allowed).toBe(true);
    expect((await limiter.hit('k', 3)).allowed).toBe(false);
    await sleep(320);
    for (let i = 0; i < 3; i++) expect((await limiter.hit('k', 3)).allowed).toBe(true);
  });
});
