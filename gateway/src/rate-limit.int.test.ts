import { Redis } from 'ioredis';
import { testRedisUrl, uniqueName } from '@platform/testing';
import { RedisSlidingWindow, type LeaseOptions, type LimitResult } from './rate-limiter';
import { maxInAnyWindow } from './test/windows';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(testRedisUrl());
});
afterAll(async () => {
  await redis.quit();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A limiter on a Redis connection of its own, whose Lua calls (its only command) are counted once connected. */
async function countedLimiter(options: Partial<LeaseOptions>, now?: () => number) {
  const client = new Redis(testRedisUrl());
  // Connected first: commands from ioredis's offline queue are sent again on connect and would count twice.
  await client.ping();
  const counter = { calls: 0 };
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command: Parameters<Redis['sendCommand']>[0], stream?: Parameters<Redis['sendCommand']>[1]) => {
    if (command.name === 'evalsha' || command.name === 'eval') counter.calls++;
    return send(command, stream);
  });
  const limiter = new RedisSlidingWindow(client, `test:${uniqueName('lease')}:`, 60_000, options, now);
  return {
    limiter,
    counter,
    close: async () => {
      await limiter.close();
      client.disconnect();
    },
  };
}

/**
 * `workers` callers for `ms`, caller i on limiters[i % limiters.length], all on one key; each waits
 * `pauseMs(answer)` after an answer. Every answer, in the order they came.
 */
async function hammer(limiters: RedisSlidingWindow[], workers: number, ms: number, limit: number, pauseMs: (answer: LimitResult) => number): Promise<LimitResult[]> {
  const answers: LimitResult[] = [];
  const deadline = Date.now() + ms;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      const limiter = limiters[worker % limiters.length]!;
      while (Date.now() < deadline) {
        const answer = await limiter.hit('k', limit);
        answers.push(answer);
        const pause = pauseMs(answer);
        if (pause > 0) await sleep(pause);
      }
    }),
  );
  return answers;
}

/** When each accepted request was let through: its slot's grant (Redis TIME) or its take from a lease (this process's clock). */
const acceptedAt = (answers: LimitResult[]): number[] => answers.filter((a) => a.allowed).map((a) => a.nowMs);

describe('the Lua sliding window on Redis, one call per request (no leasing)', () => {
  const exact = { maxLease: 1 };

  test('accepts exactly the limit, rejects the rest without counting them, and reports remaining and reset', async () => {
    const limiter = new RedisSlidingWindow(redis, `test:${uniqueName('lua')}:`, 60_000, exact);
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

  test('only accepted requests are stored, and the key expires with the window and the lease time', async () => {
    const prefix = `test:${uniqueName('lua')}:`;
    const limiter = new RedisSlidingWindow(redis, prefix, 60_000, { ...exact, leaseMs: 1_000 });
    for (let i = 0; i < 10; i++) await limiter.hit('k', 3);
    expect(await redis.zcard(`${prefix}k`)).toBe(3);
    const ttl = await redis.pttl(`${prefix}k`);
    expect(ttl).toBeGreaterThan(60_000);
    expect(ttl).toBeLessThanOrEqual(61_000);
  });

  test('concurrent callers never get more than the limit accepted in any rolling window', async () => {
    const limiter = new RedisSlidingWindow(redis, `test:${uniqueName('lua')}:`, 400, exact);
    const accepted = acceptedAt(await hammer([limiter], 8, 1_500, 5, () => Math.random() * 15));
    expect(maxInAnyWindow(accepted, 400)).toBe(5);
    // The window slides: over 1.5 s of steady demand clearly more than one window's worth got through.
    expect(accepted.length).toBeGreaterThanOrEqual(15);
  });

  test('after the window a full limit is accepted again', async () => {
    const limiter = new RedisSlidingWindow(redis, `test:${uniqueName('lua')}:`, 300, exact);
    for (let i = 0; i < 3; i++) expect((await limiter.hit('k', 3)).allowed).toBe(true);
    expect((await limiter.hit('k', 3)).allowed).toBe(false);
    await sleep(320);
    for (let i = 0; i < 3; i++) expect((await limiter.hit('k', 3)).allowed).toBe(true);
  });
});

describe('slots leased ahead for a busy key', () => {
  // Far above what a loop reaches here, so leasing is never cut short near the limit.
  const LIMIT = 1_000_000_000;

  test('a busy key is decided mostly without a Redis call on the request path, and Remaining still counts down by one', async () => {
    // This process's clock, moved by hand: one lease time per 500 requests.
    let now = 1_000_000;
    const { limiter, counter, close } = await countedLimiter({ maxLease: 32, leaseMs: 200 }, () => now);
    try {
      const remaining: number[] = [];
      let decidedAtOnce = 0;
      for (let i = 0; i < 2_000; i++) {
        if (i > 0 && i % 500 === 0) now += 200;
        const hit = limiter.hit('k', 1_000_000);
        if (!(hit instanceof Promise)) decidedAtOnce++;
        const result = await hit;
        expect(result.allowed).toBe(true);
        remaining.push(result.remaining);
      }
      expect(remaining[0]).toBe(999_999);
      for (let i = 1; i < remaining.length; i++) expect(remaining[i]).toBe(remaining[i - 1]! - 1);
      // The second request already shows a busy key: from then on batches of 32, fetched when half
      // is gone, beside the requests: about one call per 16 requests, almost every request decided at once.
      expect(decidedAtOnce).toBeGreaterThan(1_850);
      expect(counter.calls).toBeLessThan(2_000 / 8);
      expect(limiter.leasedSlots).toBeGreaterThan(0);
    } finally {
      await close();
    }
  });

  test('a lease past its time is never used: the next request asks Redis, and the unused slots are given back with that call', async () => {
    const prefix = `test:${uniqueName('lease')}:`;
    let now = 5_000_000;
    const limiter = new RedisSlidingWindow(redis, prefix, 60_000, { maxLease: 64, leaseMs: 100 }, () => now);
    try {
      for (let i = 0; i < 100; i++) await limiter.hit('k', LIMIT);
      now += 100;
      // The batch is now 64: this request's call leases 63 slots ahead.
      await limiter.hit('k', LIMIT);
      expect(limiter.leasedSlots).toBe(63);
      expect(await redis.zcard(`${prefix}k`)).toBe(101 + 63);
      now += 100;
      const late = limiter.hit('k', LIMIT);
      expect(late).toBeInstanceOf(Promise);
      expect((await late).remaining).toBe(LIMIT - 102);
      // The 63 expired slots left Redis with that call; one request in the last lease time: nothing leased ahead.
      expect(limiter.leasedSlots).toBe(0);
      expect(await redis.zcard(`${prefix}k`)).toBe(102);
    } finally {
      await limiter.close();
    }
  });

  test('an idle key costs one call per request, as without leasing', async () => {
    const { limiter, counter, close } = await countedLimiter({ maxLease: 32, leaseMs: 100 });
    try {
      for (let i = 0; i < 5; i++) {
        expect((await limiter.hit('k', 1_000)).remaining).toBe(999 - i);
        await sleep(250);
      }
      expect(counter.calls).toBe(5);
      expect(limiter.leasedSlots).toBe(0);
    } finally {
      await close();
    }
  });

  test('two instances hammering one key get exactly the limit, and every slot they were granted was used', async () => {
    const prefix = `test:${uniqueName('lease')}:`;
    const options = { maxLease: 64, leaseMs: 300 };
    const limiters = [new RedisSlidingWindow(redis, prefix, 2_000, options), new RedisSlidingWindow(redis, prefix, 2_000, options)];
    try {
      const answers = await hammer(limiters, 16, 1_500, 800, (answer) => (answer.allowed ? 0 : 5));
      // Everything happened inside one 2 s window: exactly the limit got through, then 429s.
      expect(acceptedAt(answers)).toHaveLength(800);
      expect(answers.some((a) => !a.allowed)).toBe(true);
      // Nothing is left leased: Redis holds exactly the 800 used slots.
      expect(limiters[0]!.leasedSlots + limiters[1]!.leasedSlots).toBe(0);
      expect(await redis.zcard(`${prefix}k`)).toBe(800);
    } finally {
      await Promise.all(limiters.map((l) => l.close()));
    }
  });

  test('under steady demand from two instances no rolling window ever holds more than the limit', async () => {
    const prefix = `test:${uniqueName('lease')}:`;
    const options = { maxLease: 64, leaseMs: 100 };
    const limiters = [new RedisSlidingWindow(redis, prefix, 500, options), new RedisSlidingWindow(redis, prefix, 500, options)];
    try {
      const accepted = acceptedAt(await hammer(limiters, 8, 2_000, 200, () => Math.random() * 3));
      // Two clocks (Redis's and this process's monotonic one) may differ by a fraction of a
      // millisecond, so windows are checked 2 ms shorter.
      expect(maxInAnyWindow(accepted, 498)).toBeLessThanOrEqual(200);
      // The window slides and leases are used or given back: about four windows' worth got through.
      expect(accepted.length).toBeGreaterThan(400);
    } finally {
      await Promise.all(limiters.map((l) => l.close()));
    }
  });

  test('a lease unused past its time is given back, so another instance can take those slots', async () => {
    const prefix = `test:${uniqueName('lease')}:`;
    const options = { maxLease: 64, leaseMs: 150 };
    const busy = new RedisSlidingWindow(redis, prefix, 60_000, options).start();
    const other = new RedisSlidingWindow(redis, prefix, 60_000, options);
    try {
      // Busy for more than a lease time: the batch grows, and slots are leased ahead.
      const until = Date.now() + 400;
      let used = 0;
      while (Date.now() < until) {
        await busy.hit('k', LIMIT);
        used++;
        await sleep(1);
      }
      const held = busy.leasedSlots;
      expect(held).toBeGreaterThan(0);
      expect(await redis.zcard(`${prefix}k`)).toBe(used + held);
      // Then idle: the sweeper gives the unused slots back.
      await sleep(450);
      expect(busy.leasedSlots).toBe(0);
      expect(await redis.zcard(`${prefix}k`)).toBe(used);
      const result = await other.hit('k', LIMIT);
      expect(result.remaining).toBe(LIMIT - used - 1);
    } finally {
      await busy.close();
      await other.close();
    }
  });

  test('close gives back every unused slot', async () => {
    const prefix = `test:${uniqueName('lease')}:`;
    const limiter = new RedisSlidingWindow(redis, prefix, 60_000, { maxLease: 64, leaseMs: 100 });
    const until = Date.now() + 250;
    let used = 0;
    while (Date.now() < until) {
      await limiter.hit('k', LIMIT);
      used++;
    }
    expect(limiter.leasedSlots).toBeGreaterThan(0);
    await limiter.close();
    expect(await redis.zcard(`${prefix}k`)).toBe(used);
  });

  test('a leased slot is scored at the end of its lease time, so it counts a whole window after any use', async () => {
    const prefix = `test:${uniqueName('lease')}:`;
    const limiter = new RedisSlidingWindow(redis, prefix, 60_000, { maxLease: 64, leaseMs: 500 });
    try {
      const until = Date.now() + 600;
      while (Date.now() < until) await limiter.hit('k', LIMIT);
      expect(limiter.leasedSlots).toBeGreaterThan(0);
      const [seconds, micros] = (await redis.time()).map(Number) as [number, number];
      const nowMs = seconds * 1000 + micros / 1000;
      const [, newest] = await redis.zrange(`${prefix}k`, '-1', '-1', 'WITHSCORES');
      // The newest lease ends within the next lease time, not now.
      expect(Number(newest) / 1000).toBeGreaterThan(nowMs);
      expect(Number(newest) / 1000).toBeLessThanOrEqual(nowMs + 500);
    } finally {
      await limiter.close();
    }
  });
});
