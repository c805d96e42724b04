import { randomUUID } from 'node:crypto';
import { MAX_KEY_RATE_LIMIT } from '@platform/admin-api';
import { BUCKET_LIMITS, bodySha256, serviceSigningKey, signedIdentityHeaders } from '@platform/core';
import type { Platform } from '@platform/testing';

export interface Outcome {
  status: number;
  /** Client-side duration, ms. */
  ms: number;
  /** When it was sent (epoch ms). */
  at: number;
  body?: any;
  headers?: Headers;
  /** 'timeout' when the client gave up: the drill's definition of a hang. */
  error?: string;
}

/**
 * The highest per-key limit in every bucket: a drill's load key, whose every answer must be judged
 * for what the fault did, never meets a 429 however long the drill runs on a slow machine (the
 * default 300 a minute cut a Sentinel drill's reads in half once, when its recovery took long).
 */
export const LOAD_KEY_RATE_LIMITS: Record<string, number> = Object.fromEntries(Object.keys(BUCKET_LIMITS).map((bucket) => [bucket, MAX_KEY_RATE_LIMIT]));

const LOOPBACK = /^http:\/\/127\.0\.0\.1:\d+\//;

/** One JSON request with a hard client timeout; never throws (status 0 with `error` instead). */
export async function call(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown; timeoutMs?: number } = {},
): Promise<Outcome> {
  if (!LOOPBACK.test(url)) throw new Error(`drills call loopback only: ${url}`);
  const at = Date.now();
  const timeoutMs = options.timeoutMs ?? 15_000;
  try {
    const res = await fetch(url, {
      method: options.method ?? 'GET',
      headers: { ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, ms: Date.now() - at, at, body, headers: res.headers };
  } catch (err) {
    const name = (err as Error).name;
    return { status: 0, ms: Date.now() - at, at, error: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : (err as Error).message };
  }
}

/** A client of the platform's gateway with the seeded token. */
export function gateway(platform: Platform, token = platform.token) {
  const auth = { authorization: `Bearer ${token}` };
  return {
    get: (path: string, timeoutMs?: number) => call(`${platform.gatewayUrl}${path}`, { headers: auth, timeoutMs }),
    post: (path: string, body?: unknown, timeoutMs?: number) =>
      call(`${platform.gatewayUrl}${path}`, { method: 'POST', headers: auth, body: body ?? {}, timeoutMs }),
  };
}

/** A client straight to a service, signed as the gateway signs (for setup the drill does not measure). */
export function direct(platform: Platform, service: 'events' | 'warehouse' | 'pipelines') {
  const base = platform.serviceUrls[service];
  const key = serviceSigningKey(platform.internalSecret, service);
  const headers = (method: string, path: string, body?: unknown) =>
    signedIdentityHeaders(key, {
      workspaceId: platform.workspaceId,
      keyId: platform.keyId,
      scopes: null,
      method,
      pathAndQuery: path,
      requestId: randomUUID(),
      bodySha256: body === undefined ? undefined : bodySha256(JSON.stringify(body)),
    });
  return {
    get: (path: string) => call(`${base}${path}`, { headers: headers('GET', path) }),
    post: (path: string, body?: unknown) => call(`${base}${path}`, { method: 'POST', headers: headers('POST', path, body ?? {}), body: body ?? {} }),
  };
}

export interface Loop {
  outcomes: Outcome[];
  /** Stops sending and resolves when the requests in flight have ended. */
  stop(): Promise<Outcome[]>;
}

/**
 * `concurrency` workers, each sending `request(i)` then pausing `pauseMs`, until stop(),
 * `maxRequests` or `maxMs`, whichever comes first: bounded in count and time.
 */
export function startLoop(options: {
  concurrency: number;
  pauseMs: number;
  maxRequests: number;
  maxMs: number;
  request: (i: number) => Promise<Outcome>;
}): Loop {
  const outcomes: Outcome[] = [];
  const deadline = Date.now() + options.maxMs;
  let stopped = false;
  let sent = 0;
  const workers = Array.from({ length: options.concurrency }, async () => {
    while (!stopped && sent < options.maxRequests && Date.now() < deadline) {
      const outcome = await options.request(sent++);
      outcomes.push(outcome);
      if (options.pauseMs > 0) await new Promise((r) => setTimeout(r, options.pauseMs));
    }
  });
  const done = Promise.all(workers).then(() => outcomes);
  return {
    outcomes,
    stop: () => {
      stopped = true;
      return done;
    },
  };
}

/** Counts by status (0 = no answer; `0:timeout` = the client gave up). */
export function statusCounts(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) {
    const key = o.status === 0 ? `0:${o.error}` : String(o.status);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
