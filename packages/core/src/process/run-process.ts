import type { RequestListener, Server } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ServiceName } from '../contract';
import { createLogger } from './logger';
import { createMetricsRegistry, HttpMetrics, startMetricsServer } from '../observability/metrics';
import { redisTarget, type RedisConfig, type RedisTarget } from '../redis/redis-config';
import { closeServer, listen } from '../http/server';
import type { ServiceAppDeps, ServiceStores, WebhooksRuntime } from '../http/service-app';
import { gracefulShutdown, onShutdownSignals, type ShutdownStep } from './shutdown';
import type { Tracing } from '../observability/tracing';

/** What every deployable's config (src/config.ts) has that runProcess reads. */
export interface ProcessConfig {
  LOG_LEVEL: string;
  /** The address every port of the process listens on. */
  HOST: string;
  /** GET /metrics, apart from the process's own port. */
  METRICS_PORT: number;
}

/** What a process's start is given. */
export interface ProcessContext {
  logger: Logger;
  /** The process's metrics registry, served on METRICS_PORT. */
  metrics: Registry;
  /** The metrics server's shutdown step, for start to place in its list (scrapes usually go on while work drains). */
  metricsServerStep: ShutdownStep;
}

/**
 * Runs a deployable's process (a service, the gateway, a worker): its logger and metrics registry,
 * `start` (which builds the dependencies and listens), then the metrics server on METRICS_PORT;
 * on SIGTERM or SIGINT the named shutdown steps `start` returned run in their order, within
 * `shutdownDeadlineMs` (gracefulShutdown's default when absent), then the spans still buffered are
 * exported (`tracing`, from the deployable's src/tracing.ts; its log lines then carry trace ids).
 * A failed start stops the process with one line.
 */
export function runProcess(
  options: { name: string; config: ProcessConfig; shutdownDeadlineMs?: number; tracing?: Tracing },
  start: (context: ProcessContext) => ShutdownStep[] | Promise<ShutdownStep[]>,
): void {
  const { name, config, tracing } = options;
  const logger = createLogger(name, config.LOG_LEVEL, { traceIds: tracing?.enabled });
  const metrics = createMetricsRegistry();
  let metricsServer: Server | undefined;
  const metricsServerStep: ShutdownStep = { name: 'metrics server', run: () => metricsServer && closeServer(metricsServer) };
  Promise.resolve()
    .then(() => start({ logger, metrics, metricsServerStep }))
    .then(
      (steps) => {
        metricsServer = startMetricsServer(config.METRICS_PORT, metrics, logger, config.HOST);
        // Last: the spans of everything the steps before it drained.
        const traces: ShutdownStep[] = tracing?.enabled ? [{ name: 'traces', run: () => tracing.shutdown() }] : [];
        onShutdownSignals(gracefulShutdown([...steps, ...traces], logger, options.shutdownDeadlineMs));
      },
      (err: Error) => {
        process.stderr.write(`${name}: failed to start: ${err.message}\n`);
        process.exit(1);
      },
    );
}

/** What every service's config has that runService reads, besides runProcess's. */
export interface ServiceConfig extends ProcessConfig, RedisConfig {
  PLATFORM_INTERNAL_SECRET: string;
  WEBHOOKS_ALLOW_PRIVATE: boolean;
}

/** Starts a service's webhooks runtime over its client (the runtime's raw-SQL surface), as `startServiceWebhooks` does. */
export type StartWebhooks<Db, Config, Webhooks extends WebhooksRuntime = WebhooksRuntime> = (options: {
  service: ServiceName;
  sql: Db;
  /** The process's Redis (its topology and credentials); every connection is made from it. */
  redis: RedisTarget;
  config: Config;
  logger: Logger;
  metrics: Registry;
}) => Webhooks;

/** A service's app, with the shutdown steps of what the service built for it beyond the shared dependencies (pipelines: its run producer). */
export interface ServiceAppParts {
  app: RequestListener;
  /** Run after the HTTP server has closed, before the webhooks runtime. */
  drain?: ShutdownStep[];
  /** Run last, after the database. */
  disconnect?: ShutdownStep[];
}

/** What tells one service's process from another's. */
export interface ServiceDefinition<Db, Stores extends ServiceStores, Config extends ServiceConfig, Webhooks extends WebhooksRuntime = WebhooksRuntime> {
  service: ServiceName;
  config: Config;
  /** The API's port. */
  port: number;
  /** The service's Prisma client: its stores are built over it, the webhooks runtime writes through it, and it is disconnected last. */
  database: Db;
  createStores: (db: Db) => Stores;
  startWebhooks: StartWebhooks<Db, Config, Webhooks>;
  /** The service's createApp, or a function that builds what the service needs besides and returns its app with their shutdown steps. */
  createApp: (deps: ServiceAppDeps<Stores, Webhooks>) => RequestListener | ServiceAppParts;
  /** The service's tracing (its src/tracing.ts, imported first by its main.ts). */
  tracing?: Tracing;
}

/**
 * Runs a service's process: its stores over its client, its webhooks runtime, its app on `port`.
 * Shutdown closes the HTTP server, drains (the service's own steps, then the webhooks runtime),
 * closes the metrics server, then disconnects the database (then the service's own connections).
 */
export function runService<
  Db extends { $disconnect(): Promise<void> },
  Stores extends ServiceStores,
  Config extends ServiceConfig,
  Webhooks extends WebhooksRuntime = WebhooksRuntime,
>(definition: ServiceDefinition<Db, Stores, Config, Webhooks>): void {
  const { service, config, database } = definition;
  runProcess({ name: service, config, tracing: definition.tracing }, ({ logger, metrics, metricsServerStep }) => {
    const webhooks = definition.startWebhooks({ service, sql: database, redis: redisTarget(config), config, logger, metrics });
    const created = definition.createApp({
      stores: definition.createStores(database),
      logger,
      internalSecret: config.PLATFORM_INTERNAL_SECRET,
      metrics: new HttpMetrics(metrics),
      allowPrivateWebhooks: config.WEBHOOKS_ALLOW_PRIVATE,
      redisReady: () => webhooks.ping(),
      webhooks,
    });
    const { app, drain = [], disconnect = [] } = typeof created === 'function' ? { app: created } : created;
    const server = listen(app, definition.port, logger, `${service} service`, config.HOST);
    return [
      { name: 'http server', run: () => closeServer(server) },
      ...drain,
      { name: 'webhooks', run: () => webhooks.close() },
      // Scrapes go on while requests and deliveries drain.
      metricsServerStep,
      { name: 'database', run: () => database.$disconnect() },
      ...disconnect,
    ];
  });
}
