import { type Registry } from '@platform/core';
import { startServiceTestApp, type ServiceTestApp } from '@platform/testing';
import { startServiceWebhooks, TEST_WEBHOOKS_CONFIG } from '@platform/webhooks';
import { createApp, type WarehouseDeps } from '../app';
import { createDatabase, type Database } from '../database';
import { warehouseServiceStores } from '../warehouse.store';
import type { WarehouseLimits } from '../workspace-limits';

/**
 * The warehouse app on a real database and a real port; with `webhooks`, its outbox relay and
 * delivery worker too; with `limits`, those per-workspace limits instead of the defaults.
 */
export function startTestApp(options: { webhooks?: boolean; metrics?: Registry; limits?: WarehouseLimits } = {}): Promise<ServiceTestApp<Database>> {
  const { limits, ...rest } = options;
  return startServiceTestApp({
    service: 'warehouse',
    createDatabase: (url) => createDatabase(url),
    createStores: warehouseServiceStores,
    createApp: (deps: WarehouseDeps) => createApp({ ...deps, limits }),
    startWebhooks: ({ queuePrefix, ...deps }) => startServiceWebhooks({ ...deps, config: { ...TEST_WEBHOOKS_CONFIG, QUEUE_PREFIX: queuePrefix } }),
    ...rest,
  });
}
