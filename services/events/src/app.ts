import { contractRouter, createServiceApp, type ServiceAppDeps } from '@platform/core';
import { webhookRoutes, type ServiceWebhooks } from '@platform/webhooks';
import type { Express } from 'express';
import type { EventsLimits } from './config';
import { eventsApiDocument } from './events.openapi';
import { eventsRouteDefinitions } from './events.routes';
import type { EventsServiceStores } from './events.store';

/** `redisReady`: the webhook queue's Redis; `webhooks`: its runtime, whose queue a resend adds to. */
export interface EventsDeps extends ServiceAppDeps<EventsServiceStores, ServiceWebhooks> {
  /** What one workspace may keep (EVENTS_WORKSPACE_MAX_EVENTS, EVENTS_WORKSPACE_MAX_TICKETS). */
  limits: EventsLimits;
}

export function createApp(deps: EventsDeps): Express {
  const { stores } = deps;
  const definitions = eventsRouteDefinitions(
    stores,
    webhookRoutes({ store: stores.webhooks, allowPrivate: deps.allowPrivateWebhooks, queue: deps.webhooks?.queue }),
    deps.limits,
  );
  return createServiceApp({
    service: 'events',
    logger: deps.logger,
    internalSecret: deps.internalSecret,
    metrics: deps.metrics,
    routes: contractRouter('events', definitions),
    openapi: eventsApiDocument(),
    usage: (workspaceId) => stores.webhooks.usage(workspaceId),
    // Redis down (webhook deliveries wait) degrades the service without failing readiness (contract section 12).
    ready: { database: stores.ping, redis: deps.redisReady },
  });
}
