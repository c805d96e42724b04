import type { Logger } from '@platform/core';
import {
  decideFromMemory,
  FailoverLimiter,
  KeyLedger,
  rateLimitHeaders,
  type FailoverOptions,
  type LimitResult,
  type LogWrites,
  type RedisDecision,
  type RedisWindow,
} from './rate-limiter';
import { maxInAnyWindow } from './test/windows';

describe('the in-memory decision', () => {
  const WINDOW = 60_000;

  test('accepts exactly the limit in a window, then rejects without counting the rejections', () => {
    const ledger = new KeyLedger();
    let now = 1_000_000;
    const results: LimitResult[] = [];
    for (let i = 0; i < 5; i++) {
      results.push(decideFromMemory(ledger, 3, `m${i}`, now, WINDOW, false));
      if (i < 2) now += 1_000;
    }
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false, false]);
    expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0, 0]);
    // The first request leaves the window 60 s after it was accepted; the rejections added nothing.
    expect(decideFromMemory(ledger, 3, 'a', 1_000_000 + 59_999, WINDOW, false).allowed).toBe(false);
    expect(decideFromMemory(ledger, 3, 'b', 1_000_000 + 60_000, WINDOW, false)).toMatchObject({ allowed: true, remaining: 0, resetMs: 1_000_000 + 61_000 });
    expect(decideFromMemory(ledger, 3, 'c', 1_000_000 + 60_000, WINDOW, false).allowed).toBe(false);
  });

  test('reset is now while requests remain, else the moment enough counted requests have left the window', () => {
    const ledger = new KeyLedger();
    expect(decideFromMemory(ledger, 2, 'a', 5_000, WINDOW, false)).toMatchObject({ remaining: 1, resetMs: 5_000 });
    expect(decideFromMemory(ledger, 2, 'b', 6_000, WINDOW, false)).toMatchObject({ remaining: 0, resetMs: 65_000 });
    expect(decideFromMemory(ledger, 2, 'c', 7_000, WINDOW, false)).toMatchObject({ allowed: false, resetMs: 65_000 });
  });

  test("continues from Redis's last count, which is taken as in the window until one window after its answer", () => {
    const ledger = new KeyLedger();
    ledger.redisCount = 3;
    ledger.redisUntil = 10_000 + WINDOW;
    expect(decideFromMemory(ledger, 5, 'a', 20_000, WINDOW, false)).toMatchObject({ allowed: true, remaining: 1 });
    expect(decideFromMemory(ledger, 5, 'b', 21_000, WINDOW, false)).toMatchObject({ allowed: true, remaining: 0, resetMs: 10_000 + WINDOW });
    expect(decideFromMemory(ledger, 5, 'c', 22_000, WINDOW, false)).toMatchObject({ allowed: false, resetMs: 10_000 + WINDOW });
    // Redis's requests have all left; memory's two are still in the window.
    expect(decideFromMemory(ledger, 5, 'd', 10_000 + WINDOW, WINDOW, false)).toMatchObject({ allowed: true, remaining: 2 });
  });

  test('a call still in flight counts as accepted: Redis may be accepting it right now', () => {
    const ledger = new KeyLedger();
    ledger.redisCount = 1;
    ledger.redisUntil = WINDOW;
    ledger.inFlight = 2;
    expect(decideFromMemory(ledger, 4, 'a', 0, WINDOW, false)).toMatchObject({ allowed: true, remaining: 0 });
    expect(decideFromMemory(ledger, 4, 'b', 0, WINDOW, false).allowed).toBe(false);
  });

  test('a refusal after a failed call is kept for removal from Redis (the call may have run); one that never called Redis is not', () => {
    const ledger = new KeyLedger();
    ledger.redisCount = 1;
    ledger.redisUntil = WINDOW;
    decideFromMemory(ledger, 1, 'called', 0, WINDOW, true);
    decideFromMemory(ledger, 1, 'not-called', 0, WINDOW, false);
    expect(ledger.refused.map((d) => d.member)).toEqual(['called']);
    expect(ledger.accepted).toEqual([]);
  });

  test('under random bursts no rolling window accepts more than the limit, and the decision is not stingier than that', () => {
    const ledger = new KeyLedger();
    let now = 0;
    const accepted: number[] = [];
    let seed = 42;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20_000; i++) {
      now += random() < 0.05 ? Math.floor(random() * 20_000) : Math.floor(random() * 50);
      const result = decideFromMemory(ledger, 37, `m${i}`, now, WINDOW, false);
      if (result.allowed) accepted.push(now);
      // A rejection happens only when the window really holds the limit.
      else expect(accepted.filter((t) => t > now - WINDOW)).toHaveLength(37);
    }
    expect(maxInAnyWindow(accepted, WINDOW)).toBe(37);
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

/**
 * Redis's side as the Lua script does it (sorted log per key, NX adds, removals, TIME = the test
 * clock + `aheadMs`), over one ordered connection: while `slow`, calls wait in order; `timeOut()`
 * fails every waiting call as ioredis's command timeout does, and they still run, in order, at
 * `catchUp()` (unless it drops them: the connection went away before Redis read them).
 */
class FakeRedis implements RedisWindow {
  readonly logs = new Map<string, Map<string, number>>();
  slow = false;
  calls = 0;
  private readonly waiting: { run: () => RedisDecision; resolve: (r: RedisDecision) => void; reject: (e: Error) => void; timedOut: boolean }[] = [];

  constructor(
    private readonly clock: () => number,
    private readonly windowMs: number,
    private readonly aheadMs = 0,
  ) {}

  decide(key: string, limit: number, member: string, writes?: LogWrites): Promise<RedisDecision> {
    this.calls++;
    const run = () => this.run(key, limit, member, writes);
    if (!this.slow && this.waiting.length === 0) return Promise.resolve(run());
    return new Promise((resolve, reject) => this.waiting.push({ run, resolve, reject, timedOut: false }));
  }

  timeOut(): void {
    for (const call of this.waiting)
      if (!call.timedOut) {
        call.timedOut = true;
        call.reject(new Error('Command timed out'));
      }
  }

  catchUp(options: { dropTimedOut?: boolean } = {}): void {
    this.slow = false;
    for (const call of this.waiting.splice(0)) {
      if (call.timedOut && options.dropTimedOut) continue;
      const result = call.run();
      if (!call.timedOut) call.resolve(result);
    }
  }

  members(key: string): string[] {
    return [...(this.logs.get(key)?.keys() ?? [])].sort();
  }

  private run(key: string, limit: number, member: string, writes?: LogWrites): RedisDecision {
    const now = this.clock() + this.aheadMs;
    const log = this.logs.get(key) ?? new Map<string, number>();
    this.logs.set(key, log);
    for (const [m, at] of log) if (at <= now - this.windowMs) log.delete(m);
    for (const { member: m, ageMs } of writes?.accepted ?? []) if (now - ageMs > now - this.windowMs && !log.has(m)) log.set(m, now - ageMs);
    for (const m of writes?.refused ?? []) log.delete(m);
    let allowed = false;
    if (member !== '' && log.size < limit) {
      if (!log.has(member)) log.set(member, now);
      allowed = true;
    }
    const count = log.size;
    const scores = [...log.values()].sort((a, b) => a - b);
    const resetMs = count >= limit ? scores[count - limit]! + this.windowMs : now;
    return { allowed, limit, remaining: Math.max(0, limit - count), resetMs, nowMs: now, count };
  }
}

/** Lets every promise and pending I/O callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function setup(options: { onFailure?: FailoverOptions['onFailure']; aheadMs?: number; windowMs?: number } = {}) {
  const clock = { now: 1_000_000 };
  const windowMs = options.windowMs ?? 60_000;
  const redis = new FakeRedis(() => clock.now, windowMs, options.aheadMs);
  const connection = { status: 'ready' };
  const lines: string[] = [];
  const logger = { warn: (_: unknown, msg: string) => lines.push(msg), info: (msg: string) => lines.push(msg) } as unknown as Logger;
  const limiter = new FailoverLimiter(connection, redis, logger, { windowMs, probeEveryMs: 0, onFailure: options.onFailure, now: () => clock.now });
  /** `n` requests on one key at once. */
  const burst = (n: number, key = 'k', limit = 10) => Array.from({ length: n }, () => limiter.hit(key, limit));
  return { clock, redis, connection, lines, limiter, burst };
}

const accepted = async (answers: Promise<LimitResult>[]): Promise<number> => (await Promise.all(answers)).filter((a) => a.allowed).length;

describe('failover limiter (contract section 17)', () => {
  test('a call that timed out and then ran in Redis counts once: the window over the instance holds the limit, and Redis ends with exactly what was accepted', async () => {
    const { redis, lines, limiter, burst } = setup();
    expect(await accepted(burst(6))).toBe(6);
    redis.slow = true;
    const inFlight = burst(3);
    redis.timeOut();
    // Decided from memory, each counting Redis's 6 and the calls still in flight: 6 + 3 fit in 10.
    expect(await accepted(inFlight)).toBe(3);
    expect(limiter.state().mode).toBe('memory');
    // The instance decides from memory while the probe waits: one more fits.
    expect(await accepted(burst(3))).toBe(1);
    redis.catchUp();
    await limiter.backgroundWork();
    expect(limiter.state().mode).toBe('redis');
    expect(await accepted(burst(5))).toBe(0);
    // Redis ran the three timed-out calls (accepting them) and got memory's fourth with the probe.
    expect(redis.members('k')).toHaveLength(10);
    expect(lines.filter((l) => l.includes('degraded'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('restored'))).toHaveLength(1);
  });

  test('a call that timed out and never reached Redis: what memory accepted is written there when Redis answers again', async () => {
    const { redis, limiter, burst } = setup();
    expect(await accepted(burst(6))).toBe(6);
    redis.slow = true;
    const inFlight = burst(3);
    redis.timeOut();
    expect(await accepted(inFlight)).toBe(3);
    redis.catchUp({ dropTimedOut: true });
    await limiter.backgroundWork();
    expect(redis.members('k')).toHaveLength(9);
    expect(await accepted(burst(5))).toBe(1);
  });

  test('a request memory refused after its call timed out is removed from Redis if the call ran there: refusals never count', async () => {
    const { redis, limiter, burst } = setup();
    expect(await accepted(burst(9))).toBe(9);
    redis.slow = true;
    const inFlight = burst(3);
    redis.timeOut();
    // 9 in Redis and the others in flight: only the last to time out fits.
    expect(await accepted(inFlight)).toBe(1);
    // Redis runs them late and accepts the first; the probe then writes memory's and removes Redis's.
    redis.catchUp();
    await limiter.backgroundWork();
    expect(redis.members('k')).toHaveLength(10);
    expect(await accepted(burst(1))).toBe(0);
  });

  test('another key decided from memory is written to Redis once Redis answers, without a request for it', async () => {
    const { redis, limiter, burst } = setup();
    await Promise.all(burst(1, 'a'));
    redis.slow = true;
    const slowCall = burst(1, 'a');
    redis.timeOut();
    await Promise.all(slowCall);
    expect(await accepted(burst(4, 'b', 3))).toBe(3);
    expect(redis.members('b')).toEqual([]);
    redis.catchUp();
    await limiter.backgroundWork();
    expect(redis.members('b')).toHaveLength(3);
  });

  test.each([5_000, -5_000])(
    "memory's decisions are written in Redis's time (Redis %i ms ahead): they leave Redis's window exactly one window after they were made",
    async (aheadMs) => {
      const { clock, redis, limiter, burst } = setup({ aheadMs, windowMs: 10_000 });
      await Promise.all(burst(1, 'k', 2));
      redis.slow = true;
      const slowCall = burst(1, 'k', 2);
      redis.timeOut();
      expect(await accepted(slowCall)).toBe(1);
      const acceptedAt = clock.now;
      clock.now += 3_000;
      // The timed-out call never reached Redis: memory's decision is what Redis gets.
      redis.catchUp({ dropTimedOut: true });
      await limiter.backgroundWork();
      clock.now = acceptedAt + 10_000 - 1;
      expect(await accepted(burst(1, 'k', 2))).toBe(0);
      clock.now = acceptedAt + 10_000;
      expect(await accepted(burst(3, 'k', 2))).toBe(2);
    },
  );

  test("'instance': after one failure the next requests come from memory while one probe waits; 'request': the next request asks Redis again", async () => {
    for (const onFailure of ['instance', 'request'] as const) {
      const { redis, limiter, burst } = setup({ onFailure });
      await Promise.all(burst(1));
      redis.slow = true;
      const slowCall = burst(1);
      redis.timeOut();
      await Promise.all(slowCall);
      await settle();
      const callsBefore = redis.calls;
      const next = burst(3);
      await settle();
      expect(redis.calls - callsBefore).toBe(onFailure === 'instance' ? 0 : 3);
      redis.catchUp();
      await Promise.all(next);
      await limiter.backgroundWork();
      expect(limiter.state().mode).toBe('redis');
    }
  });

  test('while the connection is not ready nothing is sent to Redis; the probe waits for it, then Redis counts again', async () => {
    const { redis, connection, lines, limiter, burst } = setup();
    connection.status = 'reconnecting';
    expect(await accepted(burst(3, 'k', 2))).toBe(2);
    expect(redis.calls).toBe(0);
    expect(limiter.state()).toMatchObject({ mode: 'memory', memoryDecisions: 3 });
    connection.status = 'ready';
    await limiter.backgroundWork();
    expect(limiter.state().mode).toBe('redis');
    expect(redis.members('k')).toHaveLength(2);
    expect(lines.map((l) => l.match(/degraded|restored/)?.[0])).toEqual(['degraded', 'restored']);
  });

  test.each(['instance', 'request'] as const)(
    "'%s': under random bursts, slow calls, timeouts and lost calls, no rolling window over the instance accepts more than the limit",
    async (onFailure) => {
      const WINDOW = 1_000;
      const LIMIT = 7;
      const { clock, redis, limiter } = setup({ onFailure, windowMs: WINDOW });
      let seed = 7;
      const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const acceptedAt: number[] = [];
      const answers: Promise<void>[] = [];
      for (let step = 0; step < 3_000; step++) {
        clock.now += Math.floor(random() * 40);
        const r = random();
        if (r < 0.03) redis.slow = true;
        else if (r < 0.06) redis.timeOut();
        else if (r < 0.09) redis.catchUp({ dropTimedOut: random() < 0.5 });
        for (let i = Math.floor(random() * 4); i > 0; i--)
          answers.push(
            limiter.hit('k', LIMIT).then((answer) => {
              // Redis's TIME is the test clock here: every answer's time is when it was decided.
              if (answer.allowed) acceptedAt.push(answer.nowMs);
            }),
          );
        await settle();
      }
      redis.timeOut();
      redis.catchUp();
      await Promise.all(answers);
      await limiter.backgroundWork();
      expect(limiter.state().memoryDecisions).toBeGreaterThan(100);
      expect(maxInAnyWindow(acceptedAt, WINDOW)).toBeLessThanOrEqual(LIMIT);
      // Not stingy past reason: most windows' worth was accepted.
      expect(acceptedAt.length).toBeGreaterThan(((clock.now - 1_000_000) / WINDOW) * LIMIT * 0.5);
    },
  );
});
