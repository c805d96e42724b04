import { contractRouter, createServiceApp, type HttpMetrics, type Logger } from '@platform/core';
import { webhookRoutes } from '@platform/webhooks';
import type { Express } from 'express';
import type { Database } from './database';
import { eventsApiDocument } from './events.openapi';
import { eventsRouteDefinitions } from './events.routes';
import { eventsStore } from './events.store';

export interface EventsDeps {
  db: Database;
  logger: Logger;
  internalSecret: string;
  /** Accept private and loopback webhook targets (tests, local use). */
  allowPrivateWebhooks: boolean;
  /** Resolves when Redis (the webhook queue) answers. */
  redisReady: () => Promise<void>;
  /** Request counts and latencies by route (GET /metrics); none when absent. */
  metrics?: HttpMetrics;
}

export function createApp(deps: EventsDeps): Express {
  const definitions = eventsRouteDefinitions(eventsStore(deps.db), webhookRoutes({ sql: deps.db, allowPrivate: deps.allowPrivateWebhooks }));
  return createServiceApp({
    service: 'events',
    logger: deps.logger,
    internalSecret: deps.internalSecret,
    metrics: deps.metrics,
    routes: contractRouter('events', definitions),
    openapi: eventsApiDocument(),
    // Redis down (webhook deliveries wait) degrades the service without failing readiness (contract section 12).
    ready: { database: () => deps.db.$queryRaw`SELECT 1`, redis: deps.redisReady },
  });
}
