import { createHash, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, conflict, invalidRequest, type FieldError, type RedisConnection } from '@platform/core';
import { IDEMPOTENCY_CLAIM_LUA, IDEMPOTENCY_COMPLETE_LUA, IDEMPOTENCY_RELEASE_LUA } from './idempotency.lua';
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
 * Answers up to 1 MiB are held and stored; a longer one (no contract endpoint sends one to a
 * POST or PATCH) is streamed and not stored, so a retry runs again (contract section 7): no
 * client can make the platform keep more than this per key, in the Redis that also holds the
 * rate limits and queues.
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

/**
 * Where a key's record lives: workspace + method + path + key (every API key of a workspace
 * shares it). The hash keeps the Redis key short; method and path hold no space or newline, so
 * the hashed text is unambiguous.
 */
export function idempotencyRecordKey(workspaceId: string, method: string, path: string, key: string): string {
  return `${workspaceId}:${createHash('sha256').update(`${method} ${path}\n${key}`).digest('base64url')}`;
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

/** A running claim: only its holder can store the answer or release it. */
export interface IdempotencyClaim {
  recordKey: string;
  bodyHash: string;
  token: string;
}

export type ClaimOutcome =
  { state: 'claimed'; claim: IdempotencyClaim } | { state: 'mismatch' } | { state: 'running' } | { state: 'done'; response: StoredResponse };

interface IdempotencyCommands {
  gatewayIdempotencyClaimBuffer(key: string, bodyHash: string, token: string, claimTtlMs: number): Promise<Buffer[]>;
  gatewayIdempotencyComplete(key: string, token: string, bodyHash: string, ttlMs: number, status: number, headers: string, body: Buffer): Promise<number>;
  gatewayIdempotencyRelease(key: string, token: string): Promise<number>;
}

export interface IdempotencyStoreOptions {
  /** TTL of a running claim (the upstream timeout plus `IDEMPOTENCY_CLAIM_MARGIN_MS`). */
  claimTtlMs: number;
  recordTtlMs?: number;
}

/**
 * Idempotency records in Redis: one atomic call before the upstream (claim, or what holds the
 * key) and one after (store the answer, or release the claim). Every method rejects when Redis
 * is unreachable or slow; the caller decides what that means.
 */
export class IdempotencyStore {
  private readonly instance = randomBytes(6).toString('base64url');
  private seq = 0;
  private readonly commands: IdempotencyCommands;
  private readonly claimTtlMs: number;
  private readonly recordTtlMs: number;

  constructor(
    private readonly redis: RedisConnection,
    private readonly keyPrefix: string,
    options: IdempotencyStoreOptions,
  ) {
    this.claimTtlMs = options.claimTtlMs;
    this.recordTtlMs = options.recordTtlMs ?? IDEMPOTENCY_RECORD_TTL_MS;
    redis.defineCommand('gatewayIdempotencyClaim', { numberOfKeys: 1, lua: IDEMPOTENCY_CLAIM_LUA });
    redis.defineCommand('gatewayIdempotencyComplete', { numberOfKeys: 1, lua: IDEMPOTENCY_COMPLETE_LUA });
    redis.defineCommand('gatewayIdempotencyRelease', { numberOfKeys: 1, lua: IDEMPOTENCY_RELEASE_LUA });
    this.commands = redis as unknown as IdempotencyCommands;
  }

  async claim(recordKey: string, hash: string): Promise<ClaimOutcome> {
    // Without a connection ioredis would reject at once anyway (no offline queue); this says why.
    if (this.redis.status !== 'ready') throw new Error(`redis connection is ${this.redis.status}`);
    const claim: IdempotencyClaim = { recordKey, bodyHash: hash, token: `${this.instance}:${++this.seq}` };
    let reply: Buffer[];
    try {
      reply = await this.commands.gatewayIdempotencyClaimBuffer(this.keyPrefix + recordKey, hash, claim.token, this.claimTtlMs);
    } catch (err) {
      // A timed-out claim may still have been written; free it so retries need not wait for its TTL.
      this.release(claim).catch(() => undefined);
      throw err;
    }
    const state = reply[0]!.toString();
    if (state === 'claimed') return { state, claim };
    if (state === 'mismatch' || state === 'running') return { state };
    return {
      state: 'done',
      response: { status: Number(reply[1]!.toString()), headers: JSON.parse(reply[2]!.toString()) as StoredHeaders, body: reply[3]! },
    };
  }

  /** Stores the answer for 24 h; false when the claim was lost to another request meanwhile. */
  async complete(claim: IdempotencyClaim, response: StoredResponse): Promise<boolean> {
    const stored = await this.commands.gatewayIdempotencyComplete(
      this.keyPrefix + claim.recordKey,
      claim.token,
      claim.bodyHash,
      this.recordTtlMs,
      response.status,
      JSON.stringify(response.headers),
      response.body,
    );
    return stored === 1;
  }

  async release(claim: IdempotencyClaim): Promise<void> {
    await this.commands.gatewayIdempotencyRelease(this.keyPrefix + claim.recordKey, claim.token);
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
   * stores the answer unless another request claimed the key since. Bounded: what waits longer than
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
