import type { RequestListener } from 'node:http';
import { DEFAULT_QUOTA_LIMITS, DEFAULT_WORKSPACE_LIMITS, Readiness, Registry, type Logger, type QuotaLimits, type RedisConnection } from '@platform/core';
import { createAdminApp } from './admin.routes';
import { defaultConsoleDir, loadConsoleAssets } from './console.assets';
import { defaultDocsDir, docsSite, loadDocsPage } from './docs.handler';
import { gatewayHandler } from './gateway.handler';
import { IDEMPOTENCY_CLAIM_MARGIN_MS, idempotencyBytesUsed, IdempotencyStore } from './idempotency';
import { KeyActivityRecorder } from './key-activity';
import { DEFAULT_KEY_CACHE_OPTIONS, KeyCache, keyLookup, type KeyCacheOptions } from './key-cache';
import type { GatewayStores } from './keys.store';
import { GatewayMetrics } from './metrics';
import { UpstreamProxy, type Upstreams } from './proxy';
import { defaultLimits, FailoverLimiter, RATE_LIMIT_WINDOW_MS, RedisSlidingWindow, type LimiterState, type Limits } from './rate-limiter';
import { DEFAULT_REDIS_PREFIX } from './redis';
import { KeyChangeFeed, listenForKeyChanges, redisKeyChangePublisher, type KeyChangeFeedOptions } from './key-changes';
import { RouteTable } from './route-table';
import { workspaceUsageReader } from './service-usage';

export interface GatewayDeps {
  /** Workspaces and API keys: a workspace's own store and the cross-workspace one (its app never holds the database client). */
  stores: GatewayStores;
  /** Command connection (rate limits, idempotency records, publishing key changes). */
  redis: RedisConnection;
  /** Pub/sub connection (key changes from other instances). */
  subscriber: RedisConnection;
  logger: Logger;
  adminToken: string;
  internalSecret: string;
  upstreams: Upstreams;
  upstreamTimeoutMs: number;
  /** Prefix of every Redis key and channel (main: `<QUEUE_PREFIX>:gateway:`); tests use their own. */
  redisPrefix?: string;
  /** How long a stored answer is kept (a test seam; default 24 h, contract section 7). */
  idempotencyRecordTtlMs?: number;
  /** Per-bucket limits; defaults are the contract's. */
  limits?: Partial<Limits>;
  rateLimitWindowMs?: number;
  keyCache?: Partial<KeyCacheOptions>;
  /** The key-change log reader (default: every 250 ms; the contract wants changes applied within 1 s). */
  keyChanges?: Partial<KeyChangeFeedOptions>;
  /** How often last use and usage counts are written (default 5 s; the contract allows usage 60 s behind). */
  activityFlushMs?: number;
  /** The built workspace console (@platform/console's dist/console); null serves none. Default: that package's build. */
  consoleDir?: string | null;
  /** Where the gateway's metrics go (served by main on METRICS_PORT); default: a registry nobody reads. */
  metrics?: Registry;
  /** Tracing is on (src/tracing.ts): requests to the services get spans and carry the gateway's `traceparent`. */
  traced?: boolean;
  /** The platform default quotas (WORKSPACE_QUOTA_*); default: the contract's. */
  quotaDefaults?: QuotaLimits;
  /** The API keys one workspace may hold (GATEWAY_WORKSPACE_MAX_API_KEYS); default: core's DEFAULT_WORKSPACE_LIMITS.api_keys. */
  maxApiKeys?: number;
  /** The bytes of a workspace's stored idempotent answers, for the quotas' usage (a test seam); default: the idempotency store's count. */
  idempotencyBytesUsed?: (workspaceId: string) => Promise<number>;
}

export interface GatewayState {
  rateLimiter: LimiterState;
  keyCache: { entries: number };
}

export interface GatewayApp extends RequestListener {
  /** Stops timers and listeners, writes pending key activity, closes upstream pools. Idempotent. */
  close(): Promise<void>;
  /** Degradation and cache facts, for metrics. */
  state(): GatewayState;
  /** Writes pending key activity (last use, usage) now. */
  flushKeyActivity(): Promise<void>;
}

/** The gateway as a node:http request listener; it never listens itself. */
export function createApp(deps: GatewayDeps): GatewayApp {
  const redisPrefix = deps.redisPrefix ?? DEFAULT_REDIS_PREFIX;
  const limits: Limits = { ...defaultLimits(), ...deps.limits };
  const windowMs = deps.rateLimitWindowMs ?? RATE_LIMIT_WINDOW_MS;
  const { stores } = deps;

  const quotaDefaults = deps.quotaDefaults ?? DEFAULT_QUOTA_LIMITS;
  const keys = new KeyCache(keyLookup(stores.crossWorkspace, quotaDefaults), { ...DEFAULT_KEY_CACHE_OPTIONS, ...deps.keyCache });
  const stopListening = listenForKeyChanges(
    deps.subscriber,
    redisPrefix,
    { onChanged: (message) => keys.evict(message.token_hash), onResync: () => keys.clear() },
    deps.logger,
  );
  const keyChanges = new KeyChangeFeed(
    stores.crossWorkspace,
    { onChanged: (change) => keys.evict(change.tokenHash), onResync: () => keys.clear() },
    deps.logger,
    deps.keyChanges,
  ).start();

  const redisLimiter = new RedisSlidingWindow(deps.redis, `${redisPrefix}rl:`, windowMs);
  const limiter = new FailoverLimiter(deps.redis, redisLimiter, deps.logger, { windowMs });
  const activity = new KeyActivityRecorder(stores.crossWorkspace, deps.logger, deps.activityFlushMs).start();
  const proxy = new UpstreamProxy({ upstreams: deps.upstreams, timeoutMs: deps.upstreamTimeoutMs, traced: deps.traced });
  const idempotency = new IdempotencyStore(deps.redis, redisPrefix, {
    claimTtlMs: deps.upstreamTimeoutMs + IDEMPOTENCY_CLAIM_MARGIN_MS,
    recordTtlMs: deps.idempotencyRecordTtlMs,
  });

  const state = (): GatewayState => ({ rateLimiter: limiter.state(), keyCache: { entries: keys.size } });
  const registry = deps.metrics ?? new Registry();
  const metrics = new GatewayMetrics(registry, Object.keys(limits) as (keyof Limits)[], state);
  // Readiness follows the database only (contract section 12): without Redis the gateway serves,
  // limiting per instance in memory; Redis is shown in the body and in platform_dependency_up.
  const readiness = new Readiness({ database: () => stores.crossWorkspace.ping(), redis: () => deps.redis.ping() }, { registry, logger: deps.logger });

  const consoleDir = deps.consoleDir === undefined ? defaultConsoleDir() : deps.consoleDir;
  if (consoleDir === undefined) deps.logger.warn('workspace console not built: /console answers 404');
  const consoleAssets = consoleDir ? loadConsoleAssets(consoleDir) : undefined;

  const docsDir = defaultDocsDir();
  if (docsDir === undefined) deps.logger.warn('API reference page not built: /docs answers 404 (the /docs/*.json documents are served)');
  const docs = docsSite(deps.upstreams, docsDir ? loadDocsPage(docsDir) : undefined, deps.logger);

  // The quotas' usage of idempotency_bytes: the workspace's stored answers as the quota counts them.
  const idempotencyBytes = deps.idempotencyBytesUsed ?? ((workspaceId: string): Promise<number> => idempotencyBytesUsed(deps.redis, redisPrefix, workspaceId));
  const admin = createAdminApp({
    stores,
    keys,
    publisher: redisKeyChangePublisher(deps.redis, redisPrefix),
    limiter,
    limits,
    adminToken: deps.adminToken,
    logger: deps.logger,
    quotaDefaults,
    maxApiKeys: deps.maxApiKeys ?? DEFAULT_WORKSPACE_LIMITS.api_keys,
    readUsage: workspaceUsageReader({ proxy, internalSecret: deps.internalSecret, idempotencyBytes, logger: deps.logger }),
  });

  const handler = gatewayHandler({
    routes: new RouteTable(),
    keys,
    limiter,
    limits,
    proxy,
    idempotency,
    activity,
    internalSecret: deps.internalSecret,
    logger: deps.logger,
    admin,
    console: consoleAssets,
    docs,
    metrics,
    ready: () => readiness.require(),
    traced: deps.traced,
  });

  let closing: Promise<void> | undefined;
  return Object.assign(handler, {
    close: () =>
      (closing ??= (async () => {
        stopListening();
        await keyChanges.close();
        limiter.close();
        idempotency.close();
        await activity.close();
        await proxy.close();
      })()),
    state,
    flushKeyActivity: () => activity.flush(),
  });
}
