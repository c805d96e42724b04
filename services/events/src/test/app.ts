import { type Registry } from '@platform/core';
import { startServiceTestApp, type ServiceTestApp } from '@platform/testing';
import { startServiceWebhooks, TEST_WEBHOOKS_CONFIG } from '@platform/webhooks';
import { createApp } from '../app';
import { createDatabase, type Database } from '../database';
import { eventsServiceStores } from '../events.store';

/** The events app on a real database and a real port; with `webhooks`, its outbox relay and delivery worker too. */
export function startTestApp(options: { webhooks?: boolean; metrics?: Registry } = {}): Promise<ServiceTestApp<Database>> {
  return startServiceTestApp({
    service: 'events',
    createDatabase: (url) => createDatabase(url),
    createStores: eventsServiceStores,
    createApp,
    startWebhooks: ({ queuePrefix, ...deps }) => startServiceWebhooks({ ...deps, config: { ...TEST_WEBHOOKS_CONFIG, QUEUE_PREFIX: queuePrefix } }),
    ...options,
  });
}
