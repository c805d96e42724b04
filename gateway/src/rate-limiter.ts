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

/** Log members are `<instance>:<n>`: unique across instances without coordination. */
function memberSource(): () => string {
  const instance = randomBytes(6).toString('base64url');
  let seq = 0;
  return () => `${instance}:${++seq}`;
}

/** What a Redis call on a key writes before it decides (section 17: what memory admitted counts in Redis too). */
export interface LogWrites {
  /** Requests accepted from memory, with how long before the call was sent (ms, local clock) each was. */
  accepted: { member: string; ageMs: number }[];
  /** Requests refused from memory whose timed-out call may still have recorded them. */
  refused: string[];
}

export interface RedisDecision extends LimitResult {
  /** Entries in the key's window after the call, every instance's. */
  count: number;
}

/** The Redis side of the failover limiter: one atomic call on one key. */
export interface RedisWindow {
  /** Writes `writes` into the key's log, then decides `member` ('' decides nothing and only counts). */
  decide(key: string, limit: number, member: string, writes?: LogWrites): Promise<RedisDecision>;
}

type SlidingWindowReply = [allowed: 0 | 1, count: number, resetUs: number, nowUs: number];

interface SlidingWindowCommand {
  gatewaySlidingWindow(key: string, limit: number, windowUs: number, member: string, ...writes: (string | number)[]): Promise<SlidingWindowReply>;
}

/**
 * The exact limiter shared by every instance: a sliding log per key in Redis, one Lua call per
 * request, decided before the request is forwarded. Redis TIME orders every instance's requests
 * on one timeline, so over all instances no rolling window ever accepts more than the limit.
 * One key per call, so the call stays in one hash slot of a Redis Cluster.
 */
export class RedisSlidingWindow implements Limiter, RedisWindow {
  private readonly nextMember = memberSource();

  constructor(
    private readonly redis: RedisConnection,
    private readonly keyPrefix: string,
    private readonly windowMs: number = RATE_LIMIT_WINDOW_MS,
  ) {
    redis.defineCommand('gatewaySlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW_LUA });
  }

  hit(key: string, limit: number): Promise<LimitResult> {
    return this.decide(key, limit, this.nextMember());
  }

  async decide(key: string, limit: number, member: string, writes?: LogWrites): Promise<RedisDecision> {
    const command = this.redis as unknown as SlidingWindowCommand;
    const [allowed, count, resetUs, nowUs] = writes
      ? await command.gatewaySlidingWindow(`${this.keyPrefix}${key}`, limit, this.windowMs * 1000, member, ...writeArguments(writes))
      : await command.gatewaySlidingWindow(`${this.keyPrefix}${key}`, limit, this.windowMs * 1000, member);
    return { allowed: allowed === 1, limit, remaining: Math.max(0, limit - count), resetMs: resetUs / 1000, nowMs: nowUs / 1000, count };
  }
}

function writeArguments(writes: LogWrites): (string | number)[] {
  const args: (string | number)[] = [writes.accepted.length];
  // Rounded down: an entry may stay in Redis's window a microsecond too long, never too short.
  for (const { member, ageMs } of writes.accepted) args.push(Math.floor(ageMs * 1000), member);
  args.push(...writes.refused);
  return args;
}

/** A request decided from memory, by its log member and the local time (epoch ms) of the decision. */
interface MemoryDecision {
  member: string;
  at: number;
}

/**
 * What one instance knows of a key's window: the count in Redis's last answer, and what it did
 * since that Redis may not know.
 */
export class KeyLedger {
  /** The count in Redis's last answer (every instance's), taken as still in the window until `redisUntil`. */
  redisCount = 0;
  /** Local ms one window after that answer arrived: every entry it counted has left the window by then. */
  redisUntil = 0;
  /** Calls for this key sent to Redis and not answered yet: each may be accepting a request. */
  inFlight = 0;
  /** Accepted from memory and not yet written to Redis, oldest first. */
  readonly accepted: MemoryDecision[] = [];
  /** Refused from memory after their call failed: Redis may have recorded them, so they are removed there. */
  readonly refused: MemoryDecision[] = [];
  /** The limit of the last request on the key (a call that only writes still needs one). */
  limit = 1;

  get unwritten(): boolean {
    return this.accepted.length > 0 || this.refused.length > 0;
  }
}

function dropBefore(log: MemoryDecision[], cutoff: number): void {
  let expired = 0;
  while (expired < log.length && log[expired]!.at <= cutoff) expired++;
  if (expired > 0) log.splice(0, expired);
}

/**
 * The decision from memory, counting everything that may be in this key's window on this
 * instance: Redis's last count, the calls still in flight (Redis may be accepting them right
 * now) and what memory accepted that Redis does not know yet. So, over one instance, no rolling
 * window ever accepts more than the limit however its requests were split between Redis and
 * memory. `callMayHaveRun`: the request's own Redis call failed, and Redis may have recorded it.
 */
export function decideFromMemory(ledger: KeyLedger, limit: number, member: string, now: number, windowMs: number, callMayHaveRun: boolean): LimitResult {
  dropBefore(ledger.accepted, now - windowMs);
  dropBefore(ledger.refused, now - windowMs);
  const fromRedis = now < ledger.redisUntil ? ledger.redisCount : 0;
  const used = fromRedis + ledger.inFlight + ledger.accepted.length;
  const allowed = used < limit;
  if (allowed) ledger.accepted.push({ member, at: now });
  else if (callMayHaveRun) ledger.refused.push({ member, at: now });
  const counted = allowed ? used + 1 : used;
  const remaining = Math.max(0, limit - counted);
  const resetMs = remaining > 0 ? now : leavesAt(ledger, counted - limit + 1, fromRedis, now, windowMs);
  return { allowed, limit, remaining, resetMs, nowMs: now };
}

/** When `leaving` of the counted requests have left the window: memory's one by one, Redis's all at `redisUntil`. */
function leavesAt(ledger: KeyLedger, leaving: number, fromRedis: number, now: number, windowMs: number): number {
  let left = 0;
  let i = 0;
  let redisLeft = fromRedis === 0;
  for (;;) {
    const nextAccepted = i < ledger.accepted.length ? ledger.accepted[i]!.at + windowMs : Infinity;
    const nextRedis = redisLeft ? Infinity : ledger.redisUntil;
    // Only calls in flight hold what is left: whatever they accept leaves within a window.
    if (nextAccepted === Infinity && nextRedis === Infinity) return now + windowMs;
    if (nextAccepted <= nextRedis) {
      left++;
      i++;
      if (left >= leaving) return nextAccepted;
    } else {
      left += fromRedis;
      redisLeft = true;
      if (left >= leaving) return nextRedis;
    }
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

/** Keys whose ledger is kept; past it the least recently used one without unwritten decisions goes. */
const MAX_REMEMBERED_KEYS = 100_000;

export interface FailoverOptions {
  windowMs?: number;
  /**
   * While decisions come from memory, probes (one call at a time, in the background) start at most
   * this often: a probe that times out is followed at once by the next, so a Redis slow for one
   * moment is back in use within about one command timeout of its first answer in time.
   */
  probeEveryMs?: number;
  /**
   * What one failed or timed-out call changes. `instance`: every request is decided from memory
   * until a probe (one call, in the background) gets an answer; `request`: only that request is.
   * docs/past-one-machine/limiter.md has the measurement behind the default.
   */
  onFailure?: 'instance' | 'request';
  now?: () => number;
}

/**
 * Redis first; while Redis is unreachable or slow, the same sliding window per instance in memory
 * (contract sections 6 and 17). The fallback continues from what Redis last counted for the key
 * (all instances together), not from zero; every call to Redis carries what memory decided that
 * Redis does not know yet (accepted ones are added with their times, refused ones whose call may
 * have run are removed), so when Redis counts again it counts those too; and until then memory
 * counts them, with the calls in flight, so one instance never accepts more than the limit in any
 * rolling window, whatever timed out. Without this, an instance let up to a whole limit more
 * through each time a command timed out under load.
 *
 * Clock skew: no clocks are compared. A decision from memory goes to Redis as its age when the
 * call is sent (local monotonic clock), and the script scores it at its own TIME minus that age.
 * Redis reads TIME after the call was sent, so the entry stays in Redis's window at least as long
 * as it really should, and longer only by the call's way to Redis (under the command timeout).
 */
export class FailoverLimiter implements Limiter {
  private mode: LimiterState['mode'] = 'redis';
  private since = new Date();
  private memoryDecisions = 0;
  private redisFailures = 0;
  private readonly ledgers = new Map<string, KeyLedger>();
  private readonly nextMember = memberSource();
  private readonly windowMs: number;
  private readonly probeEveryMs: number;
  private readonly onFailure: 'instance' | 'request';
  private readonly now: () => number;
  /** The key of the last failed call: the probe asks the node that holds it. */
  private probeKey: string | undefined;
  private probing: Promise<void> | undefined;
  private draining: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly redis: { readonly status: string },
    private readonly primary: RedisWindow,
    private readonly logger: Logger,
    options: FailoverOptions = {},
  ) {
    this.windowMs = options.windowMs ?? RATE_LIMIT_WINDOW_MS;
    this.probeEveryMs = options.probeEveryMs ?? 100;
    this.onFailure = options.onFailure ?? 'instance';
    this.now = options.now ?? monotonicNow;
  }

  hit(key: string, limit: number): Promise<LimitResult> {
    if (this.redis.status === 'ready' && (this.mode === 'redis' || this.onFailure === 'request')) return this.fromRedis(key, limit);
    if (this.mode === 'redis') this.degrade(key, new Error(`redis connection is ${this.redis.status}`));
    this.memoryDecisions++;
    return Promise.resolve(decideFromMemory(this.ledger(key, limit), limit, this.nextMember(), this.now(), this.windowMs, false));
  }

  private async fromRedis(key: string, limit: number): Promise<LimitResult> {
    const ledger = this.ledger(key, limit);
    const member = this.nextMember();
    const writes = ledger.unwritten ? this.writesOf(ledger) : undefined;
    ledger.inFlight++;
    let result: RedisDecision;
    try {
      result = await this.primary.decide(key, limit, member, writes);
    } catch (err) {
      ledger.inFlight--;
      this.redisFailures++;
      this.degrade(key, err);
      this.memoryDecisions++;
      return decideFromMemory(ledger, limit, member, this.now(), this.windowMs, true);
    }
    ledger.inFlight--;
    this.confirmed(ledger, result, writes);
    return result;
  }

  /** One call that writes the key's unwritten decisions and decides nothing; false when Redis failed. */
  private async write(key: string): Promise<boolean> {
    const ledger = this.ledger(key);
    const writes = this.writesOf(ledger);
    try {
      this.confirmed(ledger, await this.primary.decide(key, ledger.limit, '', writes), writes);
      return true;
    } catch (err) {
      this.redisFailures++;
      this.degrade(key, err);
      return false;
    }
  }

  private writesOf(ledger: KeyLedger): LogWrites {
    const now = this.now();
    dropBefore(ledger.accepted, now - this.windowMs);
    dropBefore(ledger.refused, now - this.windowMs);
    return {
      accepted: ledger.accepted.map(({ member, at }) => ({ member, ageMs: now - at })),
      refused: ledger.refused.map(({ member }) => member),
    };
  }

  /** Redis answered: its count now holds what the call wrote, and Redis counts again. */
  private confirmed(ledger: KeyLedger, result: RedisDecision, writes: LogWrites | undefined): void {
    ledger.redisCount = result.count;
    ledger.redisUntil = this.now() + this.windowMs;
    if (writes) {
      const written = new Set([...writes.accepted.map((w) => w.member), ...writes.refused]);
      const kept = (log: MemoryDecision[]) => log.filter((d) => !written.has(d.member));
      ledger.accepted.splice(0, ledger.accepted.length, ...kept(ledger.accepted));
      ledger.refused.splice(0, ledger.refused.length, ...kept(ledger.refused));
    }
    if (this.mode === 'memory') this.restore();
  }

  private ledger(key: string, limit?: number): KeyLedger {
    let ledger = this.ledgers.get(key);
    // Map order is insertion order: re-inserting keeps the most recently used keys last.
    if (ledger) this.ledgers.delete(key);
    else ledger = new KeyLedger();
    this.ledgers.set(key, ledger);
    if (limit !== undefined) ledger.limit = limit;
    if (this.ledgers.size > MAX_REMEMBERED_KEYS) this.forgetOldest();
    return ledger;
  }

  private forgetOldest(): void {
    // A ledger with decisions Redis does not know yet is kept: they still count (they leave within a window).
    let checked = 0;
    for (const [key, ledger] of this.ledgers) {
      if (!ledger.unwritten && ledger.inFlight === 0) return void this.ledgers.delete(key);
      if (++checked >= 16) return;
    }
  }

  private degrade(key: string, err: unknown): void {
    this.probeKey = key;
    if (this.mode === 'memory') return;
    this.switchTo('memory', err);
    if (this.onFailure === 'instance') this.probing ??= this.probe().finally(() => (this.probing = undefined));
  }

  private restore(): void {
    this.switchTo('redis');
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  /** While decisions come from memory: one call at a time to the node that failed, until one is answered. */
  private async probe(): Promise<void> {
    while (!this.closed && this.mode === 'memory') {
      const started = this.now();
      if (this.redis.status === 'ready' && this.probeKey !== undefined) await this.write(this.probeKey);
      // Always a pause, if only a tick: a probe that fails at once must not spin.
      if (this.mode === 'memory') await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + this.probeEveryMs - this.now())).unref());
    }
  }

  /** Once Redis answers again: writes every key's decisions made from memory, one key per call. */
  private async drain(): Promise<void> {
    const keys = [...this.ledgers].filter(([, ledger]) => ledger.unwritten).map(([key]) => key);
    for (const key of keys) {
      if (this.closed || this.mode !== 'redis') return;
      if (this.ledgers.get(key)?.unwritten && !(await this.write(key))) return;
    }
  }

  /** Settles when the background probe and write-back are done (for tests and shutdown). */
  async backgroundWork(): Promise<void> {
    while (this.probing || this.draining) await Promise.all([this.probing, this.draining]);
  }

  state(): LimiterState {
    return { mode: this.mode, since: this.since.toISOString(), memoryDecisions: this.memoryDecisions, redisFailures: this.redisFailures };
  }

  close(): void {
    this.closed = true;
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
