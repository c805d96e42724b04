import { contractRouter, createServiceApp, type HttpMetrics, type Logger } from '@platform/core';
import { webhookRoutes } from '@platform/webhooks';
import type { Express } from 'express';
import type { ConnectorPolicy } from './connectors';
import type { Database } from './database';
import { pipelinesApiDocument } from './pipelines.openapi';
import { pipelinesRouteDefinitions } from './pipelines.routes';
import { pipelinesStore } from './pipelines.store';
import type { RunsProducer } from './runs.queue';
import { runsStore } from './runs.store';

export interface PipelinesDeps {
  db: Database;
  producer: RunsProducer;
  logger: Logger;
  internalSecret: string;
  /** Prefix of the Location header's path, e.g. `/pipelines/v3` (the gateway does not rewrite headers). */
  publicBasePath: string;
  /** Accept private and loopback webhook targets (tests, local use). */
  allowPrivateWebhooks: boolean;
  /** What connector configs may reach (CONNECTORS_ALLOW_PRIVATE, the platform's databases). */
  connectors: ConnectorPolicy;
  /** Request counts and latencies by route (GET /metrics); none when absent. */
  metrics?: HttpMetrics;
}

export function createApp(deps: PipelinesDeps): Express {
  const pipelines = pipelinesStore(deps.db);
  const definitions = pipelinesRouteDefinitions({
    pipelines,
    runs: { runs: runsStore(deps.db), pipelines, producer: deps.producer, logger: deps.logger },
    publicBasePath: deps.publicBasePath,
    webhooks: webhookRoutes({ sql: deps.db, allowPrivate: deps.allowPrivateWebhooks }),
    connectors: deps.connectors,
  });
  return createServiceApp({
    service: 'pipelines',
    logger: deps.logger,
    internalSecret: deps.internalSecret,
    metrics: deps.metrics,
    routes: contractRouter('pipelines', definitions),
    openapi: pipelinesApiDocument(),
    // Redis down (no triggers) degrades the API without failing readiness (contract section 12).
    ready: { database: () => deps.db.$queryRaw`SELECT 1`, redis: () => deps.producer.ping() },
  });
}
