import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { BUCKET_LIMITS, type BucketName, type Logger, type RedisConnection } from '@platform/core';
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
  hit(key: string, limit: number): Promise<LimitResult>;
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

type SlidingWindowReply = [allowed: 0 | 1, count: number, resetUs: number, nowUs: number];

interface SlidingWindowCommand {
  gatewaySlidingWindow(key: string, limit: number, windowUs: number, member: string): Promise<SlidingWindowReply>;
}

/**
 * The exact limiter shared by every instance: a sliding log per key in Redis, one Lua call per
 * request, decided before the request is forwarded. Redis TIME orders every instance's requests
 * on one timeline, so over all instances no rolling window ever accepts more than the limit.
 */
export class RedisSlidingWindow implements Limiter {
  /** Log members are `<instance>:<n>`: unique across instances without coordination. */
  private readonly instance = randomBytes(6).toString('base64url');
  private seq = 0;

  constructor(
    private readonly redis: RedisConnection,
    private readonly keyPrefix: string,
    private readonly windowMs: number = RATE_LIMIT_WINDOW_MS,
  ) {
    redis.defineCommand('gatewaySlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW_LUA });
  }

  async hit(key: string, limit: number): Promise<LimitResult> {
    const [allowed, count, resetUs, nowUs] = await (this.redis as unknown as SlidingWindowCommand).gatewaySlidingWindow(
      `${this.keyPrefix}${key}`,
      limit,
      this.windowMs * 1000,
      `${this.instance}:${++this.seq}`,
    );
    return { allowed: allowed === 1, limit, remaining: Math.max(0, limit - count), resetMs: resetUs / 1000, nowMs: nowUs / 1000 };
  }
}

/** The same sliding log per instance, in memory: the fallback while Redis is unreachable. */
export class MemorySlidingWindow {
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
    private readonly redis: RedisConnection,
    private readonly primary: Limiter,
    private readonly fallback: MemorySlidingWindow,
    private readonly logger: Logger,
    private readonly retryAfterMs = 1_000,
  ) {}

  async hit(key: string, limit: number): Promise<LimitResult> {
    if (this.redis.status === 'ready' && Date.now() >= this.retryRedisAt) {
      try {
        return this.fromRedis(key, await this.primary.hit(key, limit));
      } catch (err) {
        return this.failOver(key, limit, err);
      }
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
