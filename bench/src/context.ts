import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { bodySha256, serviceSigningKey, signedIdentityHeaders, type ServiceName, type ServiceQuotaLimits } from '@platform/core';
import type { Platform } from '@platform/testing';

/** Who a direct call is signed for, and the quotas the gateway would sign with it (absent: the contract's defaults). */
export interface BenchIdentity {
  workspaceId: string;
  keyId: string;
  scopes: null;
  quotas?: ServiceQuotaLimits;
}

export interface BenchContext {
  platform: Platform;
  resultsDir: string;
  /** The demo workspace's identity, for requests signed as the gateway signs them. */
  identity: BenchIdentity;
  db: { events: pg.Pool; warehouse: pg.Pool; pipelines: pg.Pool; admin: pg.Pool };
  log: (line: string) => void;
}

/** Headers the gateway would add for this request to that service (direct-to-service calls), as the demo workspace or `as`. */
export function signed(
  ctx: BenchContext,
  service: ServiceName,
  method: string,
  pathAndQuery: string,
  body?: string,
  as: BenchIdentity = ctx.identity,
): Record<string, string> {
  return signedIdentityHeaders(serviceSigningKey(ctx.platform.internalSecret, service), {
    ...as,
    method,
    pathAndQuery,
    requestId: randomUUID(),
    bodySha256: bodySha256(body),
  });
}

/** One JSON call straight to a service, signed like the gateway's (as the demo workspace, or `as`). */
export async function callService(
  ctx: BenchContext,
  service: ServiceName,
  method: string,
  path: string,
  body?: unknown,
  as?: BenchIdentity,
): Promise<{ status: number; body: any; at: number }> {
  const raw = body === undefined ? undefined : JSON.stringify(body);
  const res = await fetch(`${ctx.platform.serviceUrls[service]}${path}`, {
    method,
    headers: { ...signed(ctx, service, method, path, raw, as), 'content-type': 'application/json' },
    body: raw,
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

/** One call to the platform's admin API (first gateway, admin token); throws unless 2xx. */
export async function adminCall<T = Record<string, unknown>>(ctx: BenchContext, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${ctx.platform.gatewayUrl}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ctx.platform.adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} /admin/v1${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** A new workspace (admin API) to call as, with the quotas the gateway would sign for it (an operator's raised values, or the defaults). */
export async function benchWorkspace(ctx: BenchContext, name: string, quotas?: ServiceQuotaLimits): Promise<BenchIdentity> {
  const workspace = await adminCall<{ id: string }>(ctx, 'POST', '/workspaces', { name });
  return { workspaceId: workspace.id, keyId: randomUUID(), scopes: null, ...(quotas ? { quotas } : {}) };
}
