// First: tracing must be in place before ioredis and pg are loaded (the imports below load them).
import { tracing } from './tracing';
import { closeServer, describeRedisTarget, listeningAt, loadConfig, redisTarget, runProcess } from '@platform/core';
import { createApp } from './app';
import { GatewayConfig, quotaDefaults } from './config';
import { createDatabase } from './database';
import { gatewayStores } from './keys.store';
import { createGatewayServer } from './server';
import { closeRedis, createRedis, createSubscriber, gatewayRedisPrefix } from './redis';

const config = loadConfig(GatewayConfig);
runProcess({ name: 'gateway', config, tracing }, async ({ logger, metrics, metricsServerStep }) => {
  const db = createDatabase(config.GATEWAY_DATABASE_URL, config);
  const redisAt = redisTarget(config);
  const redis = createRedis(redisAt, logger, 'gateway', config.REDIS_COMMAND_TIMEOUT_MS);
  const subscriber = createSubscriber(redisAt, logger);
  logger.info({ redis: describeRedisTarget(redisAt) }, 'redis topology');
  const app = createApp({
    stores: gatewayStores(db),
    redis,
    subscriber,
    logger,
    adminToken: config.PLATFORM_ADMIN_TOKEN,
    internalSecret: config.PLATFORM_INTERNAL_SECRET,
    upstreams: { events: config.EVENTS_URL, warehouse: config.WAREHOUSE_URL, pipelines: config.PIPELINES_URL },
    upstreamTimeoutMs: config.GATEWAY_UPSTREAM_TIMEOUT_MS,
    redisPrefix: gatewayRedisPrefix(config.QUEUE_PREFIX),
    keyChanges: { pollMs: config.GATEWAY_KEY_CHANGES_POLL_MS },
    limits: { events: config.EVENTS_RATE_LIMIT },
    activityFlushMs: config.GATEWAY_USAGE_FLUSH_MS,
    quotaDefaults: quotaDefaults(config),
    maxApiKeys: config.GATEWAY_WORKSPACE_MAX_API_KEYS,
    metrics,
    traced: tracing.enabled,
  });

  // The first Prisma query loads the query compiler synchronously; doing it before listening keeps
  // that pause from timing out the first requests' Redis calls.
  await db.$queryRaw`SELECT 1`.catch((err: unknown) => logger.warn({ err }, 'database not reachable at start'));

  const server = createGatewayServer(app, { headersTimeoutMs: config.GATEWAY_HEADERS_TIMEOUT_MS, requestTimeoutMs: config.GATEWAY_REQUEST_TIMEOUT_MS });
  server.listen(config.GATEWAY_PORT, config.HOST, () => logger.info(listeningAt(server, config.GATEWAY_PORT), 'gateway listening'));
  // The metrics server (METRICS_PORT) is never the public port: scrapes reach the gateway's pods directly.
  return [
    // Requests in flight finish; keep-alive connections close after their answer.
    { name: 'http server', run: () => closeServer(server) },
    { name: 'gateway', run: () => app.close() },
    metricsServerStep,
    { name: 'database', run: () => db.$disconnect() },
    { name: 'redis', run: () => Promise.all([closeRedis(subscriber), closeRedis(redis)]) },
  ];
});
