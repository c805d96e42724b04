import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { BUCKET_LIMITS, type BucketName, type Logger } from '@platform/core';
import { SLIDING_WINDOW_LUA } from './rate-limit.lua';

/** Failed authentications per client IP per window (contract section 4). */
export const FAILED_AUTH_LIMIT = 100;
export const RATE_LIMIT_WINDOW_MS = 60_000;

export type LimitName = BucketName | 'failed-auth';
export type Limits = Record<LimitName, number>;

export function defaultLimits(eventsLimit: number = BUCKET_LIMITS.events): Limits {
  return { ...BUCKET_LIMITS, events: eventsLimit, 'failed-auth': FAILED_AUTH_LIMIT };
}

export interface LimitResult {
  allowed: boolean;
  limit: number;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Epoch ms at which one more request will be accepted (now when remaining > 0). */
  resetMs: number;
  nowMs: number;
}

export interface Limiter {
  hit(key: string, limit: number): Promise<LimitResult> | LimitResult;
}

/** The three X-RateLimit-* values and, for a 429, Retry-After (contract section 6). */
export function rateLimitHeaders(result: LimitResult): Record<string, string> {
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(result.limit),
    'X-RateLimit-Remaining': String(result.remaining),
    'X-RateLimit-Reset': String(result.remaining > 0 ? Math.floor(result.nowMs / 1000) : Math.ceil(result.resetMs / 1000)),
  };
  if (!result.allowed) headers['Retry-After'] = String(Math.max(1, Math.ceil((result.resetMs - result.nowMs) / 1000)));
  return headers;
}

/** Epoch milliseconds from a monotonic clock, so a wall-clock step cannot unsort a log. */
const monotonicNow = (): number => performance.timeOrigin + performance.now();

type SlidingWindowReply = [granted: number, count: number, resetUs: number, nowUs: number];

interface SlidingWindowCommand {
  gatewaySlidingWindow(key: string, ...args: (string | number)[]): Promise<SlidingWindowReply>;
}

export interface LeaseOptions {
  /**
   * Most slots one instance leases ahead per key (1: none, one Redis call per request). Also
   * bounded by the limit: at most a sixteenth of it.
   */
  maxLease: number;
  /** How long a leased slot may wait for its request before it is given back. */
  leaseMs: number;
}

export const DEFAULT_LEASE_OPTIONS: LeaseOptions = { maxLease: 64, leaseMs: 1_000 };

/** Slots in a give-back list (lease name, first, last, ...). */
function slotCount(giveBack: (string | number)[]): number {
  let slots = 0;
  for (let i = 0; i < giveBack.length; i += 3) slots += (giveBack[i + 2] as number) - (giveBack[i + 1] as number) + 1;
  return slots;
}

/** The unused slots `next`..`end - 1` of the lease `name`, usable until `expiresAt` (this instance's clock). */
interface Lease {
  name: string;
  next: number;
  end: number;
  expiresAt: number;
}

/** Slots this instance holds unused for a key (a busy key has one or two leases at a time). */
function unusedSlots(state: KeyLeases): number {
  let slots = 0;
  for (const lease of state.leases) slots += lease.end - lease.next;
  return slots;
}

/** What one instance knows of one key. */
interface KeyLeases {
  limit: number;
  /** Oldest first; a request takes the next slot of the first. */
  leases: Lease[];
  /** Redis's count at its last answer: accepted requests and leased slots of every instance. */
  count: number;
  resetMs: number;
  /** Slots wanted per call: grows with this instance's use of the key. */
  batch: number;
  usedThisPeriod: number;
  periodStartedAt: number;
  /** Calls on their way to Redis for this key. */
  calls: number;
  /** The lease being fetched ahead, if any. */
  refill?: Promise<unknown>;
  /** Unused slots of expired leases, given back with the next call. */
  giveBack: (string | number)[];
}

/**
 * The exact limiter shared by every instance, in Redis: a sliding log in one Lua call.
 *
 * A token that only this instance sees now and then costs one call per request, decided before
 * the request is forwarded. A busy one leases slots ahead, in batches that grow with its use: its
 * requests then take a leased slot at once and the call that fetches the next batch runs beside
 * them, off the request's path. Leased slots count in Redis like accepted requests, so the sum
 * over all instances never passes the limit in any rolling window; a leased slot unused after
 * `leaseMs` is given back. Near the limit nothing is leased ahead (one call per request again),
 * so what one instance holds cannot keep another's client waiting for long.
 */
export class RedisSlidingWindow implements Limiter {
  private readonly instance = randomBytes(6).toString('base64url');
  private seq = 0;
  private readonly keys = new Map<string, KeyLeases>();
  private readonly options: LeaseOptions;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly windowMs: number = RATE_LIMIT_WINDOW_MS,
    options: Partial<LeaseOptions> = {},
    private readonly now: () => number = monotonicNow,
  ) {
    this.options = { ...DEFAULT_LEASE_OPTIONS, ...options };
    redis.defineCommand('gatewaySlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW_LUA });
  }

  hit(key: string, limit: number): LimitResult | Promise<LimitResult> {
    const now = this.now();
    const state = this.keyState(key, limit, now);
    state.usedThisPeriod++;
    return this.takeLeased(key, state, now) ?? this.callForSlot(key, state);
  }

  /** Slots held unused right now, over every key (for tests and metrics). */
  get leasedSlots(): number {
    let slots = 0;
    for (const state of this.keys.values()) slots += unusedSlots(state);
    return slots;
  }

  /** Gives back expired leases of idle keys and forgets keys with nothing left, every lease time. */
  start(): this {
    this.sweeper ??= setInterval(() => void this.sweep(), this.options.leaseMs).unref();
    return this;
  }

  /** Stops the sweeper and gives back every unused slot (best effort: Redis may be gone). */
  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    // A batch on its way is given back with the rest once it has landed.
    await Promise.all([...this.keys.values()].flatMap((state) => (state.refill ? [state.refill] : [])));
    const returns = [...this.keys].flatMap(([key, state]) => {
      for (const lease of state.leases) state.giveBack.push(lease.name, lease.next, lease.end - 1);
      state.leases = [];
      return state.giveBack.length > 0 ? [this.call(key, state, 0, false).catch(() => undefined)] : [];
    });
    this.keys.clear();
    await Promise.all(returns);
  }

  private async sweep(): Promise<void> {
    const now = this.now();
    const calls: Promise<unknown>[] = [];
    for (const [key, state] of this.keys) {
      this.expireLeases(state, now);
      if (state.calls > 0) continue;
      if (state.giveBack.length > 0) calls.push(this.call(key, state, 0, false).catch(() => undefined));
      else if (state.leases.length === 0 && now - state.periodStartedAt > 2 * this.options.leaseMs) this.keys.delete(key);
    }
    await Promise.all(calls);
  }

  private keyState(key: string, limit: number, now: number): KeyLeases {
    let state = this.keys.get(key);
    if (!state) {
      state = { limit, leases: [], count: 0, resetMs: now, batch: 1, usedThisPeriod: 0, periodStartedAt: now, calls: 0, giveBack: [] };
      this.keys.set(key, state);
    }
    // Slots leased under another limit are slots all the same; the script applies the new one.
    state.limit = limit;
    if (now - state.periodStartedAt >= this.options.leaseMs) {
      // Lease about as many slots as this instance used in the last lease time, within bounds.
      const used = now - state.periodStartedAt < 2 * this.options.leaseMs ? state.usedThisPeriod : 0;
      state.batch = this.batchFor(limit, used);
      state.usedThisPeriod = 0;
      state.periodStartedAt = now;
    }
    return state;
  }

  /**
   * A key used again within the lease time gets its batch at once, from the rate so far (over at
   * least a tenth of the lease time), so a burst does not pay one call per request until the
   * lease time is over.
   */
  private growBatch(state: KeyLeases, now: number): void {
    if (state.usedThisPeriod < 2) return;
    const elapsed = Math.max(now - state.periodStartedAt, this.options.leaseMs / 10);
    state.batch = Math.max(state.batch, this.batchFor(state.limit, (state.usedThisPeriod * this.options.leaseMs) / elapsed));
  }

  private batchFor(limit: number, usesPerLease: number): number {
    return Math.min(this.maxLease(limit), 2 ** Math.ceil(Math.log2(Math.max(1, usesPerLease))));
  }

  private maxLease(limit: number): number {
    return Math.max(1, Math.min(this.options.maxLease, Math.floor(limit / 16)));
  }

  /** Near the limit every slot is asked for by the request that uses it. */
  private scarce(state: KeyLeases): boolean {
    return state.limit - state.count < 4 * this.maxLease(state.limit);
  }

  private expireLeases(state: KeyLeases, now: number): void {
    while (state.leases.length > 0 && state.leases[0]!.expiresAt <= now) {
      const lease = state.leases.shift()!;
      state.giveBack.push(lease.name, lease.next, lease.end - 1);
      // No longer held, and about to leave Redis's count: Remaining must not drop meanwhile.
      state.count -= lease.end - lease.next;
    }
  }

  /** A leased slot, if this instance holds one; fetches the next batch when half is gone. */
  private takeLeased(key: string, state: KeyLeases, now: number): LimitResult | undefined {
    this.expireLeases(state, now);
    const lease = state.leases[0];
    if (!lease) return undefined;
    if (++lease.next === lease.end) state.leases.shift();
    const unused = unusedSlots(state);
    if (state.refill === undefined && state.batch > 1 && unused <= state.batch / 2 && !this.scarce(state)) {
      state.refill = this.call(key, state, state.batch, false)
        .catch(() => undefined) // the next request without a slot asks (and meets the error) itself
        .finally(() => (state.refill = undefined));
    }
    return this.allowed(state.limit, state.count, unused, state.resetMs, now);
  }

  private async callForSlot(key: string, state: KeyLeases): Promise<LimitResult> {
    if (state.refill) {
      await state.refill;
      const taken = this.takeLeased(key, state, this.now());
      if (taken) return taken;
    }
    this.growBatch(state, this.now());
    // One slot for this request, and the batch ahead unless the key is scarce or another call is on its way.
    const wanted = this.scarce(state) || state.calls > 0 ? 1 : state.batch;
    // This call's own answer: other calls' answers may have updated the key's state meanwhile.
    const { granted, count, resetMs, nowMs } = await this.call(key, state, wanted, true);
    if (granted === 0) return { allowed: false, limit: state.limit, remaining: 0, resetMs, nowMs };
    return this.allowed(state.limit, count, unusedSlots(state), resetMs, nowMs);
  }

  /** Slots this instance holds unused are this client's to take: not yet spent. */
  private allowed(limit: number, count: number, unused: number, resetMs: number, nowMs: number): LimitResult {
    const remaining = Math.max(0, limit - count + unused);
    return { allowed: true, limit, remaining, resetMs: remaining > 0 ? nowMs : resetMs, nowMs };
  }

  /**
   * One Lua call: gives back what expired, asks for `wanted` slots (the first used at once when
   * `firstUsedNow`) and keeps the rest as a lease; Redis's count and reset update the key's state.
   */
  private async call(key: string, state: KeyLeases, wanted: number, firstUsedNow: boolean): Promise<{ granted: number; count: number; resetMs: number; nowMs: number }> {
    const name = `${this.instance}:${++this.seq}`;
    const expiresAt = this.now() + this.options.leaseMs;
    const giveBack = state.giveBack;
    state.giveBack = [];
    state.calls++;
    let reply: SlidingWindowReply;
    try {
      reply = await (this.redis as unknown as SlidingWindowCommand).gatewaySlidingWindow(
        `${this.keyPrefix}${key}`,
        state.limit,
        this.windowMs * 1000,
        this.options.leaseMs * 1000,
        wanted,
        firstUsedNow ? 1 : 0,
        name,
        ...giveBack,
      );
    } catch (err) {
      // Whether Redis removed them is unknown; asking again is harmless.
      state.giveBack.push(...giveBack);
      throw err;
    } finally {
      state.calls--;
    }
    const [granted, count, resetUs, nowUs] = reply;
    // Slots that expired while the call was on its way are still in Redis's count, but no longer held.
    state.count = count - slotCount(state.giveBack);
    state.resetMs = resetUs / 1000;
    const ahead = firstUsedNow ? granted - 1 : granted;
    if (ahead > 0) {
      const first = granted - ahead;
      state.leases.push({ name, next: first, end: granted, expiresAt });
      state.leases.sort((a, b) => a.expiresAt - b.expiresAt);
    }
    return { granted, count: state.count, resetMs: state.resetMs, nowMs: nowUs / 1000 };
  }
}

/** The same sliding log per instance, in memory: the fallback while Redis is unreachable. */
export class MemorySlidingWindow implements Limiter {
  private readonly logs = new Map<string, number[]>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly windowMs: number = RATE_LIMIT_WINDOW_MS,
    private readonly now: () => number = monotonicNow,
  ) {}

  get keys(): number {
    return this.logs.size;
  }

  get window(): number {
    return this.windowMs;
  }

  hit(key: string, limit: number): LimitResult {
    const now = this.now();
    let log = this.logs.get(key);
    if (!log) {
      log = [];
      this.logs.set(key, log);
    }
    let expired = 0;
    while (expired < log.length && log[expired]! <= now - this.windowMs) expired++;
    if (expired > 0) log.splice(0, expired);
    let count = log.length;
    let allowed = false;
    if (count < limit) {
      log.push(now);
      count++;
      allowed = true;
    }
    const resetMs = count >= limit ? log[count - limit]! + this.windowMs : now;
    return { allowed, limit, remaining: Math.max(0, limit - count), resetMs, nowMs: now };
  }

  /** Drops logs whose entries have all left the window. */
  sweep(): void {
    const cutoff = this.now() - this.windowMs;
    for (const [key, log] of this.logs) if (log.length === 0 || log[log.length - 1]! <= cutoff) this.logs.delete(key);
  }

  start(): this {
    this.sweeper ??= setInterval(() => this.sweep(), this.windowMs).unref();
    return this;
  }

  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.logs.clear();
  }
}

export interface LimiterState {
  mode: 'redis' | 'memory';
  /** When the current mode began. */
  since: string;
  /** Requests decided by the in-memory limiter since start. */
  memoryDecisions: number;
  /** Redis calls that failed or timed out since start. */
  redisFailures: number;
}

/** Keys whose last Redis answer is remembered for the fallback; the oldest are dropped past it. */
const MAX_REMEMBERED_KEYS = 100_000;

/**
 * Redis first; while Redis is unreachable or slow, the in-memory limiter of the same limits.
 * After a failure Redis is left alone for `retryAfterMs`, so a slow Redis costs one command
 * timeout per interval, not one per request. When Redis answers again it counts again.
 *
 * The fallback starts from what Redis last counted for the key (all instances together), not
 * from zero: a token that had used up its bucket stays limited through a Redis hiccup. Without
 * this, every instance let up to a whole limit more through each time a command timed out under
 * load (measured by bench/: 458 accepted for a limit of 400 over two instances).
 */
export class FailoverLimiter implements Limiter {
  private mode: LimiterState['mode'] = 'redis';
  private since = new Date();
  private retryRedisAt = 0;
  private memoryDecisions = 0;
  private redisFailures = 0;
  /** Per key, the last answer Redis gave (its count covers every instance). */
  private readonly lastRedis = new Map<string, LimitResult>();

  constructor(
    private readonly redis: Redis,
    private readonly primary: Limiter,
    private readonly fallback: MemorySlidingWindow,
    private readonly logger: Logger,
    private readonly retryAfterMs = 1_000,
  ) {}

  /** Synchronous when the answer is (a leased slot, or the in-memory limiter). */
  hit(key: string, limit: number): LimitResult | Promise<LimitResult> {
    if (this.redis.status === 'ready' && Date.now() >= this.retryRedisAt) {
      let answer: LimitResult | Promise<LimitResult>;
      try {
        answer = this.primary.hit(key, limit);
      } catch (err) {
        return this.failOver(key, limit, err);
      }
      if (answer instanceof Promise) {
        return answer.then(
          (result) => this.fromRedis(key, result),
          (err: unknown) => this.failOver(key, limit, err),
        );
      }
      return this.fromRedis(key, answer);
    }
    if (this.mode === 'redis') this.switchTo('memory', new Error(`redis connection is ${this.redis.status}`));
    this.memoryDecisions++;
    return this.fallbackHit(key, limit);
  }

  private fromRedis(key: string, result: LimitResult): LimitResult {
    if (this.mode === 'memory') this.switchTo('redis');
    this.remember(key, result);
    return result;
  }

  private failOver(key: string, limit: number, err: unknown): LimitResult {
    this.redisFailures++;
    this.retryRedisAt = Date.now() + this.retryAfterMs;
    if (this.mode === 'redis') this.switchTo('memory', err);
    this.memoryDecisions++;
    return this.fallbackHit(key, limit);
  }

  private remember(key: string, result: LimitResult): void {
    // Map order is insertion order: re-inserting keeps the most recently used keys last.
    this.lastRedis.delete(key);
    this.lastRedis.set(key, result);
    if (this.lastRedis.size > MAX_REMEMBERED_KEYS) this.lastRedis.delete(this.lastRedis.keys().next().value!);
  }

  /** The in-memory decision, with what Redis had already counted in the window taken off the limit. */
  private fallbackHit(key: string, limit: number): LimitResult {
    const last = this.lastRedis.get(key);
    const now = Date.now();
    const counted = last && now - last.nowMs < this.fallback.window ? Math.min(limit, last.limit - last.remaining) : 0;
    if (counted >= limit) return { allowed: false, limit, remaining: 0, resetMs: Math.max(last!.resetMs, now), nowMs: now };
    return { ...this.fallback.hit(key, limit - counted), limit };
  }

  state(): LimiterState {
    return { mode: this.mode, since: this.since.toISOString(), memoryDecisions: this.memoryDecisions, redisFailures: this.redisFailures };
  }

  private switchTo(mode: LimiterState['mode'], err?: unknown): void {
    this.mode = mode;
    this.since = new Date();
    if (mode === 'memory') {
      this.logger.warn({ err: err instanceof Error ? err.message : err }, 'rate limiting degraded: Redis unavailable, using per-instance in-memory limits');
    } else {
      this.logger.info('rate limiting restored: Redis counts again');
    }
  }
}
