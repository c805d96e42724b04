import http from 'node:http';
import { createLogger, gracefulShutdown, onShutdownSignals } from '@platform/core';
import { createApp } from './app';
import { readConfig } from './config';
import { createDatabase } from './database';
import { closeRedis, createRedis, createSubscriber } from './redis';

async function main(): Promise<void> {
  const config = readConfig();
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const db = createDatabase(config.GATEWAY_DATABASE_URL);
  const redis = createRedis(config.REDIS_URL, logger);
  const subscriber = createSubscriber(config.REDIS_URL, logger);
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
  });

  // The first Prisma query loads the query compiler synchronously; doing it before listening keeps
  // that pause from timing out the first requests' Redis calls.
  await db.$queryRaw`SELECT 1`.catch((err: unknown) => logger.warn({ err }, 'database not reachable at start'));

  const server = http.createServer(app);
  // Longer than a load balancer's idle timeout (60 s is common), so the balancer closes idle connections first.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.listen(config.GATEWAY_PORT, () => {
    logger.info({ port: config.GATEWAY_PORT }, 'gateway listening');
  });

  onShutdownSignals(
    gracefulShutdown(
      [
        { name: 'http server', run: () => new Promise<void>((resolve) => server.close(() => resolve())) },
        { name: 'gateway', run: () => app.close() },
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
