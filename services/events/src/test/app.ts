import { type Registry } from '@platform/core';
import { startServiceTestApp, type ServiceTestApp } from '@platform/testing';
import { startServiceWebhooks, TEST_WEBHOOKS_CONFIG } from '@platform/webhooks';
import type { Express } from 'express';
import { createApp, type EventsDeps } from '../app';
import { DEFAULT_EVENTS_LIMITS, type EventsLimits } from '../config';
import { createDatabase, type Database } from '../database';
import { eventsServiceStores } from '../events.store';

/** createApp with the given limits, for startServiceTestApp (which gives every other dependency). */
export function createAppWithLimits(limits: EventsLimits = DEFAULT_EVENTS_LIMITS): (deps: Omit<EventsDeps, 'limits'>) => Express {
  return (deps) => createApp({ ...deps, limits });
}

/**
 * The events app on a real database and a real port; with `webhooks`, its outbox relay and delivery
 * worker too; `limits`: what one workspace may keep (core's defaults unless given).
 */
export function startTestApp(options: { webhooks?: boolean; metrics?: Registry; limits?: EventsLimits } = {}): Promise<ServiceTestApp<Database>> {
  const { limits = DEFAULT_EVENTS_LIMITS, ...rest } = options;
  return startServiceTestApp({
    service: 'events',
    createDatabase: (url) => createDatabase(url),
    createStores: eventsServiceStores,
    createApp: createAppWithLimits(limits),
    startWebhooks: ({ queuePrefix, ...deps }) => startServiceWebhooks({ ...deps, config: { ...TEST_WEBHOOKS_CONFIG, QUEUE_PREFIX: queuePrefix } }),
    ...rest,
  });
}
