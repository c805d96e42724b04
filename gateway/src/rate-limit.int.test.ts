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

/** A limiter on a Redis connection of its own, whose Lua calls (its only command) are counted once connected. */
async function countedLimiter() {
  const client = new Redis(testRedisUrl());
  // Connected first: commands from ioredis's offline queue are sent again on connect and would count twice.
  await client.ping();
  const counter = { calls: 0 };
  const send = client.sendCommand.bind(client);
  client.sendCommand = (command: Parameters<Redis['sendCommand']>[0], stream?: Parameters<Redis['sendCommand']>[1]) => {
    if (command.name === 'evalsha' || command.name === 'eval') counter.calls++;
    return send(command, stream);
  };
  const limiter = new RedisSlidingWindow(client, `test:${uniqueName('rl')}:`, 60_000);
  return { limiter, counter, close: () => client.quit() };
}

/**
 * `workers` callers for `ms`, caller i on limiters[i % limiters.length], all on one key; each waits
 * `pauseMs(answer)` after an answer. Every answer, in the order they came.
 */
async function hammer(
  limiters: RedisSlidingWindow[],
  workers: number,
  ms: number,
  limit: number,
  pauseMs: (answer: LimitResult) => number,
  enough: (answers: LimitResult[]) => boolean = () => false,
): Promise<LimitResult[]> {
  const answers: LimitResult[] = [];
  const deadline = Date.now() + ms;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      const limiter = limiters[worker % limiters.length]!;
      while (Date.now() < deadline && !enough(answers)) {
        const answer = await limiter.hit('k', limit);
        answers.push(answer);
        const pause = pauseMs(answer);
        if (pause > 0) await sleep(pause);
      }
    }),
  );
  return answers;
}

/** When each accepted request was let through (Redis TIME). */
const acceptedAt = (answers: LimitResult[]): number[] => answers.filter((a) => a.allowed).map((a) => a.nowMs);

describe('the Lua sliding window on Redis, one call per request', () => {
  test('accepts exactly the limit, rejects the rest without counting them, and reports remaining and reset', async () => {
    const limiter = new RedisSlidingWindow(redis, `test:${uniqueName('lua')}:`, 60_000);
    const results: LimitResult[] = [];
    const before = Date.now();
    for (let i = 0; i < 6; i++) results.push(await limiter.hit('k', 4));
    const after = Date.now();
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, false, false]);
    expect(results.map((r) => r.remaining)).toEqual([3, 2, 1, 0, 0, 0]);
    expect(results[0]!.resetMs).toBe(results[0]!.nowMs);
    // With nothing left, reset is when the first accepted request leaves the window.
    expect(results[3]!.resetMs).toBeCloseTo(results[0]!.nowMs + 60_000, 3);
    expect(results[5]!.resetMs).toBeCloseTo(results[0]!.nowMs + 60_000, 3);
    // Redis TIME, not this process's clock, but the two agree closely on this machine.
    expect(results[0]!.nowMs).toBeGreaterThanOrEqual(before - 1_000);
    expect(results[0]!.nowMs).toBeLessThanOrEqual(after + 1_000);
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
    // Demand until three windows' worth got through (the window slides), however slowly the machine runs.
    const enough = (answers: LimitResult[]) => acceptedAt(answers).length >= 15;
    const accepted = acceptedAt(await hammer([limiter], 8, 60_000, 5, () => Math.random() * 15, enough));
    expect(maxInAnyWindow(accepted, 400)).toBe(5);
    expect(accepted.length).toBeGreaterThanOrEqual(15);
  });

  test("writes from memory (contract 17): an accepted one is added once at Redis's now minus its age, a refused one removed, nothing past the window", async () => {
    const prefix = `test:${uniqueName('lua')}:`;
    const limiter = new RedisSlidingWindow(redis, prefix, 60_000);
    const first = await limiter.decide('k', 10, 'by-redis');
    await limiter.decide('k', 10, 'refused-by-memory');
    const written = await limiter.decide('k', 10, '', {
      // 'by-redis' is there already (a timed-out call that ran): not added twice, its time kept.
      accepted: [
        { member: 'by-memory', ageMs: 5_000 },
        { member: 'by-redis', ageMs: 1_000 },
        { member: 'left-the-window', ageMs: 60_001 },
      ],
      refused: ['refused-by-memory', 'never-arrived'],
    });
    expect(written).toMatchObject({ allowed: false, count: 2, remaining: 8 });
    expect(Number(await redis.zscore(`${prefix}k`, 'by-memory')) / 1000).toBeCloseTo(written.nowMs - 5_000, 0);
    expect(Number(await redis.zscore(`${prefix}k`, 'by-redis')) / 1000).toBeCloseTo(first.nowMs, 3);
    expect((await redis.zrange(`${prefix}k`, '0', '-1')).sort()).toEqual(['by-memory', 'by-redis']);
    expect(await redis.pttl(`${prefix}k`)).toBeGreaterThan(59_000);
    // The next decision counts them.
    expect(await limiter.decide('k', 3, 'next')).toMatchObject({ allowed: true, count: 3, remaining: 0 });
  });

  test('after the window a full limit is accepted again', async () => {
    // A window long enough for four calls on a busy machine.
    const limiter = new RedisSlidingWindow(redis, `test:${uniqueName('lua')}:`, 5_000);
    for (let i = 0; i < 3; i++) expect((await limiter.hit('k', 3)).allowed).toBe(true);
    const refused = await limiter.hit('k', 3);
    expect(refused.allowed).toBe(false);
    // The scenario: the window passes (until the reset reported, by Redis's clock: a sleep past it).
    await sleep(refused.resetMs - refused.nowMs + 50);
    for (let i = 0; i < 3; i++) expect((await limiter.hit('k', 3)).allowed).toBe(true);
  });
});

describe('several instances on one key', () => {
  const LIMIT = 1_000_000_000;

  test('every request is one Lua call, and Remaining counts down by one', async () => {
    const { limiter, counter, close } = await countedLimiter();
    try {
      for (let i = 0; i < 20; i++) expect((await limiter.hit('k', LIMIT)).remaining).toBe(LIMIT - 1 - i);
      expect(counter.calls).toBe(20);
    } finally {
      await close();
    }
  });

  test('two instances hammering one key get exactly the limit, and only accepted requests are stored', async () => {
    const prefix = `test:${uniqueName('rl')}:`;
    // A window longer than the whole hammering, which stops once 429s come (the limit was reached).
    const limiters = [new RedisSlidingWindow(redis, prefix, 120_000), new RedisSlidingWindow(redis, prefix, 120_000)];
    const refusals = (answers: LimitResult[]) => answers.filter((a) => !a.allowed).length >= 32;
    const answers = await hammer(limiters, 16, 60_000, 800, (answer) => (answer.allowed ? 0 : 5), refusals);
    // Everything happened inside one window: exactly the limit got through, then 429s.
    expect(acceptedAt(answers)).toHaveLength(800);
    expect(answers.some((a) => !a.allowed)).toBe(true);
    expect(await redis.zcard(`${prefix}k`)).toBe(800);
  });

  test('under steady demand from two instances no rolling window ever holds more than the limit', async () => {
    const prefix = `test:${uniqueName('rl')}:`;
    const limiters = [new RedisSlidingWindow(redis, prefix, 500), new RedisSlidingWindow(redis, prefix, 500)];
    // Demand until more than two windows' worth got through (the window slides), however slowly the machine runs.
    const enough = (answers: LimitResult[]) => acceptedAt(answers).length > 400;
    const accepted = acceptedAt(await hammer(limiters, 8, 60_000, 200, () => Math.random() * 3, enough));
    expect(maxInAnyWindow(accepted, 500)).toBeLessThanOrEqual(200);
    expect(accepted.length).toBeGreaterThan(400);
  });
});
