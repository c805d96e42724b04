import http from 'node:http';
import { closeServer, createLogger, createMetricsRegistry, gracefulShutdown, listeningAt, onShutdownSignals, startMetricsServer } from '@platform/core';
import { createApp } from './app';
import { readConfig } from './config';
import { createDatabase } from './database';
import { closeRedis, createRedis, createSubscriber } from './redis';

async function main(): Promise<void> {
  const config = readConfig();
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const db = createDatabase(config.GATEWAY_DATABASE_URL, config);
  const redis = createRedis(config.REDIS_URL, logger);
  const subscriber = createSubscriber(config.REDIS_URL, logger);
  const metrics = createMetricsRegistry();
  const app = createApp({
    db,
    redis,
    subscriber,
    logger,
    adminToken: config.PLATFORM_ADMIN_TOKEN,
    internalSecret: config.PLATFORM_INTERNAL_SECRET,
    upstreams: { events: config.EVENTS_URL, warehouse: config.WAREHOUSE_URL, pipelines: config.PIPELINES_URL },
    upstreamTimeoutMs: config.GATEWAY_UPSTREAM_TIMEOUT_MS,
    limits: { events: config.EVENTS_RATE_LIMIT },
    rateLimitLeases: { maxLease: config.GATEWAY_RATE_LIMIT_LEASE_MAX },
    metrics,
  });

  // The first Prisma query loads the query compiler synchronously; doing it before listening keeps
  // that pause from timing out the first requests' Redis calls.
  await db.$queryRaw`SELECT 1`.catch((err: unknown) => logger.warn({ err }, 'database not reachable at start'));

  // Slow clients (slowloris, a trickled body) get 408 from node itself once their headers or
  // whole request take too long; node checks at connectionsCheckingInterval (default 30 s), so
  // check often enough for the limits to mean what they say. Idle keep-alive connections are
  // not affected (the header timer starts with a request's first byte).
  const server = http.createServer(
    {
      headersTimeout: Math.min(config.GATEWAY_HEADERS_TIMEOUT_MS, config.GATEWAY_REQUEST_TIMEOUT_MS),
      requestTimeout: config.GATEWAY_REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(1_000, config.GATEWAY_HEADERS_TIMEOUT_MS),
    },
    app,
  );
  // Longer than a load balancer's idle timeout (60 s is common), so the balancer closes idle connections first.
  server.keepAliveTimeout = 65_000;
  server.listen(config.GATEWAY_PORT, config.HOST, () => logger.info(listeningAt(server, config.GATEWAY_PORT), 'gateway listening'));
  // Never on the public port: scrapes reach the gateway's pods directly.
  const metricsServer = startMetricsServer(config.METRICS_PORT, metrics, logger, config.HOST);

  onShutdownSignals(
    gracefulShutdown(
      [
        // Requests in flight finish; keep-alive connections close after their answer.
        { name: 'http server', run: () => closeServer(server) },
        { name: 'gateway', run: () => app.close() },
        { name: 'metrics server', run: () => closeServer(metricsServer) },
        { name: 'database', run: () => db.$disconnect() },
        { name: 'redis', run: () => Promise.all([closeRedis(subscriber), closeRedis(redis)]) },
      ],
      logger,
    ),
  );
}

main().catch((err: Error) => {
  process.stderr.write(`gateway: failed to start: ${err.message}\n`);
  process.exit(1);
});
