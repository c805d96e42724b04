import { createLogger, gracefulShutdown, onShutdownSignals } from '@platform/core';
import { createApp } from './app';
import { readConfig } from './config';
import { createDatabase } from './database';

const config = readConfig();
const logger = createLogger('warehouse', config.LOG_LEVEL);
const db = createDatabase(config.WAREHOUSE_DATABASE_URL);
const server = createApp({ db, logger, internalSecret: config.PLATFORM_INTERNAL_SECRET }).listen(config.WAREHOUSE_PORT, () => {
  logger.info({ port: config.WAREHOUSE_PORT }, 'warehouse service listening');
});
// Longer than the gateway's keep-alive so the gateway, not this side, closes idle pooled sockets.
server.keepAliveTimeout = 65_000;

onShutdownSignals(
  gracefulShutdown(
    [
      { name: 'http server', run: () => new Promise<void>((resolve) => server.close(() => resolve())) },
      { name: 'database', run: () => db.$disconnect() },
    ],
    logger,
  ),
);
