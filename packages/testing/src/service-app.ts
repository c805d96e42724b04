import { createServer, type RequestListener, type Server } from 'node:http';
import { createLogger, HttpMetrics, type Registry, type ServiceAppDeps, type ServiceAppParts, type ServiceStores, type WebhooksRuntime } from '@platform/core';
import { TEST_INTERNAL_SECRET, testDatabaseUrl, testRedisUrl, uniqueName } from './test-env';
import { deleteRedisKeys } from './redis';

type Logger = ReturnType<typeof createLogger>;

/** What tells one service's test app from another's: what its main.ts gives core's runService, for the test database. */
export interface ServiceTestAppOptions<Db, Stores extends ServiceStores, Webhooks extends WebhooksRuntime = WebhooksRuntime> {
  service: string;
  createDatabase: (url: string) => Db;
  /** The service's stores over the client, as its main.ts builds them: the app gets these, never the client. */
  createStores: (db: Db) => Stores;
  /** The service's createApp, or a function that builds what the service needs besides (its own queues) and returns its app with their shutdown steps. */
  createApp: (deps: ServiceAppDeps<Stores, Webhooks>) => RequestListener | ServiceAppParts;
  /** Starts the service's webhooks runtime under `queuePrefix` (a test's own); called when `webhooks` is set. */
  startWebhooks: (deps: { service: string; sql: Db; redis: string; queuePrefix: string; logger: Logger; metrics?: Registry }) => Webhooks;
  webhooks?: boolean;
  metrics?: Registry;
  /** The key prefix of the test's queues (its webhook queue and the service's own); default a fresh one. close() deletes its keys. */
  queuePrefix?: string;
}

export interface ServiceTestApp<Db> {
  server: Server;
  db: Db;
  queuePrefix: string;
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
 * close() deletes) with the test retry schedule. close() ends them in the order runService does.
 */
export async function startServiceTestApp<
  Db extends { $disconnect(): Promise<void> },
  Stores extends ServiceStores,
  Webhooks extends WebhooksRuntime = WebhooksRuntime,
>(options: ServiceTestAppOptions<Db, Stores, Webhooks>): Promise<ServiceTestApp<Db>> {
  const { service } = options;
  const db = options.createDatabase(testDatabaseUrl(service));
  const logger = createLogger(`${service}-test`, 'silent');
  const queuePrefix = options.queuePrefix ?? uniqueName(`${service}-test`);
  const webhooks = options.webhooks
    ? options.startWebhooks({ service, sql: db, redis: testRedisUrl(), queuePrefix, logger, metrics: options.metrics })
    : undefined;
  const created = options.createApp({
    stores: options.createStores(db),
    logger,
    internalSecret: TEST_INTERNAL_SECRET,
    metrics: options.metrics && new HttpMetrics(options.metrics),
    allowPrivateWebhooks: true,
    redisReady: async () => webhooks?.ping(),
    webhooks,
  });
  const { app, drain = [], disconnect = [] } = typeof created === 'function' ? { app: created } : created;
  const server = await listenOnFreePort(app);
  return {
    server,
    db,
    queuePrefix,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const step of drain) await step.run();
      await webhooks?.close();
      await db.$disconnect();
      for (const step of disconnect) await step.run();
      if (webhooks || options.queuePrefix) await deleteRedisKeys(queuePrefix, testRedisUrl());
    },
  };
}
