import { createHash, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, conflict, invalidRequest, type FieldError, type RedisConnection } from '@platform/core';
import { IDEMPOTENCY_CLAIM_LUA, IDEMPOTENCY_COMPLETE_LUA, IDEMPOTENCY_RELEASE_LUA, IDEMPOTENCY_USAGE_LUA } from './idempotency.lua';
import { forwardedResponseHeaders } from './proxy';

/** How long a finished answer is replayed (contract section 7). */
export const IDEMPOTENCY_RECORD_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Added to the upstream timeout for the TTL of a running claim: a claim outlives any request
 * the gateway still waits for, yet a gateway that dies mid-request blocks its key for seconds,
 * not a day.
 */
export const IDEMPOTENCY_CLAIM_MARGIN_MS = 5_000;

/**
 * Answers up to 1 MiB (status, headers and body as stored) are held and stored; a longer one (no
 * contract endpoint sends one to a POST or PATCH) is not stored, so a retry runs again (contract
 * section 7): no client can make the platform keep more than this per key, in the Redis that also
 * holds the rate limits and queues. It is also what a running claim reserves of its workspace's
 * quota (contract section 20).
 */
export const MAX_STORED_RESPONSE_BYTES = 1024 * 1024;

const MAX_KEY_LENGTH = 255;
const VISIBLE_ASCII = /^[\x21-\x7e]*$/;
const HEADER_FIELD = 'Idempotency-Key';

/** The methods whose requests may carry an Idempotency-Key. */
export function takesIdempotencyKey(method: string | undefined): boolean {
  return method === 'POST' || method === 'PATCH';
}

function headerError(code: string, message: string): FieldError {
  return { in: 'header', field: HEADER_FIELD, code, message };
}

/** The key of a request that sent the header (1-255 visible ASCII characters), or its 400. */
export function parseIdempotencyKey(value: string | string[]): string | ApiError {
  // node:http joins a repeated header with ", ", which the visible-ASCII rule then refuses.
  const key = Array.isArray(value) ? value.join(', ') : value;
  if (key.length > MAX_KEY_LENGTH) return invalidRequest([headerError('too_long', `must be at most ${MAX_KEY_LENGTH} characters`)], 'Invalid Idempotency-Key.');
  if (key.length === 0 || !VISIBLE_ASCII.test(key)) {
    return invalidRequest([headerError('invalid_format', `must be 1-${MAX_KEY_LENGTH} visible ASCII characters`)], 'Invalid Idempotency-Key.');
  }
  return key;
}

/** A key's scope (contract section 7): the workspace, and a hash of method + path + key. */
export interface IdempotencyScope {
  workspaceId: string;
  id: string;
}

/**
 * Every API key of a workspace shares its scopes. The hash keeps the Redis key short; method and
 * path hold no space or newline, so the hashed text is unambiguous.
 */
export function idempotencyScope(workspaceId: string, method: string, path: string, key: string): IdempotencyScope {
  return { workspaceId, id: createHash('sha256').update(`${method} ${path}\n${key}`).digest('base64url') };
}

/**
 * Where a workspace's idempotency data lives under the gateway's prefix (`<QUEUE_PREFIX>:gateway:`,
 * so platforms sharing a Redis share none of it): its records, and the three keys of its byte
 * count (idempotency.lua.ts). The workspace id is the hash tag of all of them (the prefix carries no
 * braces, see gatewayRedisPrefix), so each script touches one Cluster slot, and workspaces spread
 * over every master.
 */
export function idempotencyKeys(prefix: string, workspaceId: string) {
  const tag = `{${workspaceId}}`;
  return {
    record: (id: string) => `${prefix}idem:${tag}:${id}`,
    answers: `${prefix}idem-bytes:${tag}:answers`,
    claims: `${prefix}idem-bytes:${tag}:claims`,
    sizes: `${prefix}idem-bytes:${tag}:sizes`,
  };
}

// Besides hop-by-hop and rate-limit headers (dropped as when proxying): what the gateway sets
// per response, and what would be stale or wrong on a later answer.
const NOT_REPLAYED = new Set(['x-request-id', 'platform-version', 'date', 'content-length', 'retry-after', 'idempotent-replayed']);

export type StoredHeaders = Record<string, string | string[]>;

/** The service's headers that a replay repeats: content-type, location, etag and the like. */
export function replayableHeaders(upstream: IncomingHttpHeaders): StoredHeaders {
  const out: StoredHeaders = {};
  for (const [name, value] of Object.entries(forwardedResponseHeaders(upstream, {}))) {
    if (value === undefined || NOT_REPLAYED.has(name)) continue;
    out[name] = typeof value === 'number' ? String(value) : value;
  }
  return out;
}

export function reusedWithDifferentBody(): ApiError {
  return conflict('This Idempotency-Key was already used with a different request body.', undefined, [
    headerError('reused_with_different_body', 'was first used with a different request body'),
  ]);
}

export function requestInProgress(): ApiError {
  return new ApiError(409, 'conflict', 'A request with this Idempotency-Key is still running; retry after Retry-After.', {
    errors: [headerError('in_progress', 'a request with this key is still running')],
    headers: { 'retry-after': '1' },
  });
}

export interface StoredResponse {
  status: number;
  headers: StoredHeaders;
  body: Buffer;
}

/** The three values a record keeps of an answer: status, headers (JSON) and body. */
function asStored(response: StoredResponse): [string, string, Buffer] {
  return [String(response.status), JSON.stringify(response.headers), response.body];
}

/** What an answer counts against its workspace's quota (contract section 20): status, headers and body as stored. */
export function storedAnswerBytes(response: StoredResponse): number {
  const [status, headers, body] = asStored(response);
  return Buffer.byteLength(status) + Buffer.byteLength(headers) + body.length;
}

/**
 * The answer to store for a request that ran, or undefined when none is: 5xx answers are not
 * stored, nor one over MAX_STORED_RESPONSE_BYTES as stored (headers included), so the 1 MiB a
 * claim reserves is the most any stored answer counts (contract sections 7 and 20).
 */
export function storableAnswer(held: { status: number; headers: IncomingHttpHeaders; body: Buffer } | undefined): StoredResponse | undefined {
  if (!held || held.status >= 500) return undefined;
  const response = { status: held.status, headers: replayableHeaders(held.headers), body: held.body };
  return storedAnswerBytes(response) <= MAX_STORED_RESPONSE_BYTES ? response : undefined;
}

/**
 * 429 for a new key while the workspace's stored answers fill its `idempotency_bytes` (contract
 * section 20): nothing ran. Retry-After is when the oldest stored answer expires.
 */
export function idempotencyQuotaReached(limit: number, retryAfterSeconds: number): ApiError {
  return new ApiError(
    429,
    'rate_limited',
    "This workspace's stored idempotent answers have reached its quota; retry after Retry-After, when the oldest expires.",
    { details: { quota: 'idempotency_bytes', limit }, headers: { 'retry-after': String(retryAfterSeconds) } },
  );
}

/** A running claim: only its holder can store the answer or release it. */
export interface IdempotencyClaim {
  scope: IdempotencyScope;
  bodyHash: string;
  token: string;
}

export type ClaimOutcome =
  | { state: 'claimed'; claim: IdempotencyClaim }
  | { state: 'mismatch' }
  | { state: 'running' }
  | { state: 'done'; response: StoredResponse }
  | { state: 'quota'; retryAfterSeconds: number };

interface IdempotencyCommands {
  gatewayIdempotencyClaimBuffer(
    ...keysAndArgs: [...LedgerKeys, bodyHash: string, token: string, claimTtlMs: number, limit: number, reserve: number, recordTtlMs: number]
  ): Promise<Buffer[]>;
  gatewayIdempotencyComplete(
    ...keysAndArgs: [...LedgerKeys, token: string, bodyHash: string, ttlMs: number, status: string, headers: string, body: Buffer, id: string]
  ): Promise<number>;
  gatewayIdempotencyRelease(...keysAndArgs: [...LedgerKeys, token: string]): Promise<number>;
  gatewayIdempotencyUsage(answers: string, claims: string, sizes: string): Promise<[number, number]>;
}
type LedgerKeys = [record: string, answers: string, claims: string, sizes: string];

/** Defines the scripts on a connection once (ioredis then sends EVALSHA, the script text only when Redis lacks it). */
function idempotencyCommands(redis: RedisConnection): IdempotencyCommands {
  if (!('gatewayIdempotencyClaim' in redis)) {
    redis.defineCommand('gatewayIdempotencyClaim', { numberOfKeys: 4, lua: IDEMPOTENCY_CLAIM_LUA });
    redis.defineCommand('gatewayIdempotencyComplete', { numberOfKeys: 4, lua: IDEMPOTENCY_COMPLETE_LUA });
    redis.defineCommand('gatewayIdempotencyRelease', { numberOfKeys: 4, lua: IDEMPOTENCY_RELEASE_LUA });
    redis.defineCommand('gatewayIdempotencyUsage', { numberOfKeys: 3, lua: IDEMPOTENCY_USAGE_LUA });
  }
  return redis as unknown as IdempotencyCommands;
}

/**
 * The bytes of a workspace's stored answers (contract section 20: the quota's usage), under the
 * gateway's Redis prefix (`<QUEUE_PREFIX>:gateway:`); answers whose records expired no longer count.
 */
export async function idempotencyBytesUsed(redis: RedisConnection, prefix: string, workspaceId: string): Promise<number> {
  const commands = idempotencyCommands(redis);
  const keys = idempotencyKeys(prefix, workspaceId);
  for (;;) {
    const [stored, more] = await commands.gatewayIdempotencyUsage(keys.answers, keys.claims, keys.sizes);
    if (more === 0) return Number(stored);
  }
}

export interface IdempotencyStoreOptions {
  /** TTL of a running claim and its reservation (the upstream timeout plus `IDEMPOTENCY_CLAIM_MARGIN_MS`). */
  claimTtlMs: number;
  /** How long a stored answer is replayed and counted; a test seam (default 24 h, contract section 7). */
  recordTtlMs?: number;
}

/**
 * Idempotency records in Redis: one atomic call before the upstream (claim, or what holds the
 * key, or the workspace's quota) and one after (store the answer, or release the claim). Every
 * method rejects when Redis is unreachable or slow; the caller decides what that means.
 *
 * The quota (contract section 20) holds under any concurrency: a new key is admitted only while
 * stored bytes + reservations < limit, and reserves MAX_STORED_RESPONSE_BYTES, the most its answer
 * can count (storableAnswer), until that answer is stored (counting its real size) or its claim is
 * released or expires. So stored bytes never pass the limit by more than 1 MiB, however many
 * gateways admit at once. The one exception: an answer written after its claim expired (Redis was
 * away longer than the claim TTL; storeLater) is counted when written, beyond that bound.
 */
export class IdempotencyStore {
  private readonly instance = randomBytes(6).toString('base64url');
  private seq = 0;
  private readonly commands: IdempotencyCommands;
  private readonly claimTtlMs: number;
  private readonly recordTtlMs: number;

  /** `prefix`: the gateway's Redis prefix, `<QUEUE_PREFIX>:gateway:`. */
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    options: IdempotencyStoreOptions,
  ) {
    this.claimTtlMs = options.claimTtlMs;
    this.recordTtlMs = options.recordTtlMs ?? IDEMPOTENCY_RECORD_TTL_MS;
    this.commands = idempotencyCommands(redis);
  }

  private keysOf(scope: IdempotencyScope): LedgerKeys {
    const keys = idempotencyKeys(this.prefix, scope.workspaceId);
    return [keys.record(scope.id), keys.answers, keys.claims, keys.sizes];
  }

  /** `bytesLimit`: the workspace's `idempotency_bytes` in force; it decides only for a new key. */
  async claim(scope: IdempotencyScope, hash: string, bytesLimit: number): Promise<ClaimOutcome> {
    // Without a connection ioredis would reject at once anyway (no offline queue); this says why.
    if (this.redis.status !== 'ready') throw new Error(`redis connection is ${this.redis.status}`);
    const claim: IdempotencyClaim = { scope, bodyHash: hash, token: `${this.instance}:${++this.seq}` };
    let reply: Buffer[];
    try {
      reply = await this.commands.gatewayIdempotencyClaimBuffer(
        ...this.keysOf(scope),
        hash,
        claim.token,
        this.claimTtlMs,
        bytesLimit,
        MAX_STORED_RESPONSE_BYTES,
        this.recordTtlMs,
      );
    } catch (err) {
      // A timed-out claim may still have been written; free it so retries need not wait for its TTL.
      this.release(claim).catch(() => undefined);
      throw err;
    }
    const state = reply[0]!.toString();
    if (state === 'claimed') return { state, claim };
    if (state === 'mismatch' || state === 'running') return { state };
    if (state === 'quota') return { state, retryAfterSeconds: Number(reply[1]!.toString()) };
    return {
      state: 'done',
      response: { status: Number(reply[1]!.toString()), headers: JSON.parse(reply[2]!.toString()) as StoredHeaders, body: reply[3]! },
    };
  }

  /** Stores the answer for 24 h and counts it; false when the claim was lost to another request meanwhile. */
  async complete(claim: IdempotencyClaim, response: StoredResponse): Promise<boolean> {
    const stored = await this.commands.gatewayIdempotencyComplete(
      ...this.keysOf(claim.scope),
      claim.token,
      claim.bodyHash,
      this.recordTtlMs,
      ...asStored(response),
      claim.scope.id,
    );
    return stored === 1;
  }

  async release(claim: IdempotencyClaim): Promise<void> {
    await this.commands.gatewayIdempotencyRelease(...this.keysOf(claim.scope), claim.token);
  }

  /** Answers that ran but could not be stored yet (Redis away), oldest first. */
  private readonly unstored: UnstoredAnswer[] = [];
  private unstoredBytes = 0;
  private storing: NodeJS.Timeout | undefined;

  /**
   * An answer whose request ran while its record could not be written (Redis went away or was slow
   * after the claim): it is written as soon as Redis answers again, so a retry with the same key
   * replays it instead of running a second time (contract sections 7 and 17). The claim keeps the
   * key for its TTL meanwhile (a retry gets 409 with Retry-After); past it, the complete script still
   * stores the answer unless another request claimed the key since. It counts in its workspace's
   * bytes when written (its claim's reservation may have expired meanwhile). Bounded: what waits longer than
   * `STORE_LATER_MAX_AGE_MS`, or beyond `STORE_LATER_MAX_BYTES`, is dropped (logged by the caller's
   * `onDropped`).
   */
  storeLater(claim: IdempotencyClaim, response: StoredResponse, onDropped: (claim: IdempotencyClaim) => void): void {
    this.unstored.push({ claim, response, since: Date.now(), onDropped });
    this.unstoredBytes += response.body.length;
    while (this.unstoredBytes > STORE_LATER_MAX_BYTES && this.unstored.length > 1) this.drop(this.unstored.shift()!);
    this.storing ??= setInterval(() => void this.storePending(), STORE_LATER_EVERY_MS).unref();
  }

  /** Answers still waiting for Redis (tests, metrics). */
  get pendingRecords(): number {
    return this.unstored.length;
  }

  private drop(entry: UnstoredAnswer): void {
    this.unstoredBytes -= entry.response.body.length;
    entry.onDropped(entry.claim);
  }

  private busy = false;
  private async storePending(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      while (this.unstored.length > 0) {
        const entry = this.unstored[0]!;
        if (Date.now() - entry.since > STORE_LATER_MAX_AGE_MS) {
          this.unstored.shift();
          this.drop(entry);
          continue;
        }
        if (this.redis.status !== 'ready') return;
        try {
          await this.complete(entry.claim, entry.response);
        } catch {
          return; // still away: the next tick tries again
        }
        this.unstored.shift();
        this.unstoredBytes -= entry.response.body.length;
      }
      clearInterval(this.storing);
      this.storing = undefined;
    } finally {
      this.busy = false;
    }
  }

  /** Stops retrying; what still waits is dropped with the process. */
  close(): void {
    if (this.storing) clearInterval(this.storing);
    this.storing = undefined;
  }
}

interface UnstoredAnswer {
  claim: IdempotencyClaim;
  response: StoredResponse;
  since: number;
  onDropped: (claim: IdempotencyClaim) => void;
}

/** How often answers that could not be stored are tried again, and for how long, in how many bytes at most. */
const STORE_LATER_EVERY_MS = 250;
const STORE_LATER_MAX_AGE_MS = 10 * 60_000;
const STORE_LATER_MAX_BYTES = 64 * 1024 * 1024;
