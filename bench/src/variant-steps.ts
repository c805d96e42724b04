/**
 * The proxied-path steps of gateway/src/gateway.handler.ts, reused by the two comparison
 * variants (bench only): bearer token from the same in-memory key cache, route and scope from the
 * same route table, version check, the same one Redis Lua call for the rate limit, and the same
 * signed identity headers. Configured from the gateway's variables.
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  bodySha256,
  createLogger,
  DEFAULT_QUOTA_LIMITS,
  DEFAULT_VERSION,
  errorBody as contractErrorBody,
  forbiddenScope,
  invalidRequest,
  noSuchEndpoint,
  rateLimited,
  requestIdFrom,
  serviceSigningKey,
  signedIdentityHeaders,
  SUPPORTED_VERSIONS,
  unauthorized,
  type ApiError,
  type ServiceName,
} from '@platform/core';
import { createDatabase } from '@platform/gateway/dist/database';
import { KeyCache, keyLookup, type CachedKey } from '@platform/gateway/dist/key-cache';
import { crossWorkspaceKeysStore } from '@platform/gateway/dist/keys.store';
import { defaultLimits, rateLimitHeaders, RedisSlidingWindow } from '@platform/gateway/dist/rate-limiter';
import { closeRedis, createRedis, DEFAULT_REDIS_PREFIX } from '@platform/gateway/dist/redis';
import { RouteTable, type ServiceMatch } from '@platform/gateway/dist/route-table';
import { bearerToken, hashToken, isTokenFormat } from '@platform/gateway/dist/tokens';

export const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};

export const logger = createLogger('bench-variant', env('LOG_LEVEL', 'warn'));
const db = createDatabase(env('GATEWAY_DATABASE_URL'));
const redis = createRedis(env('REDIS_URL'), logger, 'bench-variant');
const secret = env('PLATFORM_INTERNAL_SECRET');
const signingKeys = {
  events: serviceSigningKey(secret, 'events'),
  warehouse: serviceSigningKey(secret, 'warehouse'),
  pipelines: serviceSigningKey(secret, 'pipelines'),
};
const limits = defaultLimits(Number(env('EVENTS_RATE_LIMIT', '400')));
const store = crossWorkspaceKeysStore(db);
const keys = new KeyCache(keyLookup(store, DEFAULT_QUOTA_LIMITS));
// One Lua call per request, as the gateway.
const limiter = new RedisSlidingWindow(redis, `${DEFAULT_REDIS_PREFIX}rl:`);
const routes = new RouteTable();

export const upstreams: Record<ServiceName, string> = { events: env('EVENTS_URL'), warehouse: env('WAREHOUSE_URL'), pipelines: env('PIPELINES_URL') };

export interface Accepted {
  ok: true;
  match: ServiceMatch;
  key: CachedKey;
  /** The gateway's own response headers (request id, version, rate limit). */
  headers: Record<string, string>;
  /** Signed identity, request id and version for the service. */
  upstreamHeaders: Record<string, string>;
}
export interface Refused {
  ok: false;
  error: ApiError;
  headers: Record<string, string>;
}

/** Authentication, route, version, scope, rate limit; then the headers for the service. */
export async function checkRequest(method: string, url: string, headers: IncomingHttpHeaders, body: Buffer): Promise<Accepted | Refused> {
  const requestId = requestIdFrom(headers['x-request-id']);
  const own: Record<string, string> = { 'x-request-id': requestId, 'platform-version': DEFAULT_VERSION };
  const refuse = (error: ApiError): Refused => ({ ok: false, error, headers: own });
  const match = routes.match(method, url);
  if (!match) return refuse(noSuchEndpoint());
  const token = bearerToken(headers.authorization);
  const key = token && isTokenFormat(token) ? await keys.find(hashToken(token)) : null;
  if (!key || key.revokedAt !== null || (key.expiresAt !== null && key.expiresAt <= Date.now())) return refuse(unauthorized());
  const route = match.route;
  const bucket = route ? route.bucket : match.generalBucket;
  const limit = await limiter.hit(`key:${key.id}:${bucket}`, limits[bucket]);
  Object.assign(own, rateLimitHeaders(limit));
  if (!route) return refuse(noSuchEndpoint());
  const requested = headers['platform-version'];
  if (requested !== undefined && !SUPPORTED_VERSIONS.includes(requested as string)) return refuse(invalidRequest([], 'Unsupported platform-version.'));
  const version = (requested as string | undefined) ?? DEFAULT_VERSION;
  own['platform-version'] = version;
  if (key.scopes !== null && !key.scopes.includes(route.scope)) return refuse(forbiddenScope(route.scope));
  if (!limit.allowed) return refuse(rateLimited());
  const upstreamHeaders = {
    ...signedIdentityHeaders(signingKeys[match.service], {
      method,
      pathAndQuery: match.forwardPath,
      workspaceId: key.workspaceId,
      keyId: key.id,
      scopes: key.scopes,
      requestId,
      quotas: key.quotas,
      bodySha256: bodySha256(body),
    }),
    'platform-version': version,
  };
  return { ok: true, match, key, headers: own, upstreamHeaders };
}

/** The contract's error body for a refusal, as the gateway writes it. */
export function errorBody(error: ApiError, requestId: string | undefined): string {
  return JSON.stringify(contractErrorBody(error, requestId ?? ''));
}

/** Closes the database and Redis, then exits (SIGTERM/SIGINT). */
export function onStop(closeServer: () => void): void {
  const stop = (): void => {
    closeServer();
    void Promise.allSettled([db.$disconnect(), closeRedis(redis)]).then(() => process.exit(0));
    setTimeout(() => process.exit(0), 3_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
