import pg from 'pg';
import { signedIdentityHeaders } from '@platform/core';
import type { Platform } from '@platform/testing';

export interface BenchContext {
  platform: Platform;
  resultsDir: string;
  /** The demo workspace's identity, for requests signed as the gateway signs them. */
  identity: { workspaceId: string; keyId: string; scopes: null };
  db: { events: pg.Pool; pipelines: pg.Pool; admin: pg.Pool };
  log: (line: string) => void;
}

/** Headers the gateway would add for this request (direct-to-service calls). */
export function signed(ctx: BenchContext, method: string, pathAndQuery: string): Record<string, string> {
  return signedIdentityHeaders(ctx.platform.internalSecret, { ...ctx.identity, method, pathAndQuery });
}

/** One JSON call straight to a service, signed like the gateway's. */
export async function callService(ctx: BenchContext, base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; at: number }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...signed(ctx, method, path), 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const at = Date.now();
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, at };
}

/** Runs `task` over `items` with at most `limit` at a time. */
export async function inParallel<T, R>(items: T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await task(items[i]!, i);
      }
    }),
  );
  return results;
}
