import { createServer, type RequestListener, type Server } from 'node:http';
import { createLogger, HttpMetrics, type Registry, type ServiceAppDeps, type ServiceStores } from '@platform/core';
import { TEST_INTERNAL_SECRET, testDatabaseUrl, testRedisUrl, uniqueName } from './test-env';
import { deleteRedisKeys } from './redis';

type Logger = ReturnType<typeof createLogger>;

/** What a service's webhooks runtime (`startServiceWebhooks` of @platform/webhooks) gives the test app. */
export interface TestWebhooksRuntime {
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface ServiceTestAppOptions<Db, Stores extends ServiceStores> {
  service: string;
  createDatabase: (url: string) => Db;
  /** The service's stores over the client, as its main.ts builds them: the app gets these, never the client. */
  createStores: (db: Db) => Stores;
  createApp: (deps: ServiceAppDeps<Stores>) => RequestListener;
  /** Starts the service's webhooks runtime under `queuePrefix` (a test's own); called when `webhooks` is set. */
  startWebhooks: (deps: { service: string; sql: Db; redisUrl: string; queuePrefix: string; logger: Logger; metrics?: Registry }) => TestWebhooksRuntime;
  webhooks?: boolean;
  metrics?: Registry;
}

export interface ServiceTestApp<Db> {
  server: Server;
  db: Db;
  close: () => Promise<void>;
}

/** Listens on a free loopback port (real HTTP for integration tests). */
export function listenOnFreePort(app: RequestListener): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer(app);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/**
 * A service's app on its test database and a real port, for integration tests; with `webhooks`,
 * also its outbox relay and delivery worker on a queue of their own (a key prefix whose keys
 * close() deletes) with the test retry schedule.
 */
export async function startServiceTestApp<Db extends { $disconnect(): Promise<void> }, Stores extends ServiceStores>(
  options: ServiceTestAppOptions<Db, Stores>,
): Promise<ServiceTestApp<Db>> {
  const { service } = options;
  const db = options.createDatabase(testDatabaseUrl(service));
  const logger = createLogger(`${service}-test`, 'silent');
  const queuePrefix = uniqueName(`${service}-test`);
  const webhooks = options.webhooks
    ? options.startWebhooks({ service, sql: db, redisUrl: testRedisUrl(), queuePrefix, logger, metrics: options.metrics })
    : undefined;
  const app = options.createApp({
    stores: options.createStores(db),
    logger,
    internalSecret: TEST_INTERNAL_SECRET,
    metrics: options.metrics && new HttpMetrics(options.metrics),
    allowPrivateWebhooks: true,
    redisReady: async () => webhooks?.ping(),
  });
  const server = await listenOnFreePort(app);
  return {
    server,
    db,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await webhooks?.close();
      await db.$disconnect();
      if (webhooks) await deleteRedisKeys(queuePrefix, testRedisUrl());
    },
  };
}
