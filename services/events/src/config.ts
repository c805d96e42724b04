import { z } from 'zod';
import { env, loadConfig, CommonConfig } from '@platform/core';
import { WebhooksConfig } from '@platform/webhooks';

export const EventsConfig = z.object({
  EVENTS_PORT: env.port(4001),
  /** GET /metrics (Prometheus) on a port of its own, apart from the API's; 0 picks a free one. */
  METRICS_PORT: env.port(9101),
  EVENTS_DATABASE_URL: env.url('postgresql://postgres@127.0.0.1:5432/platform_events'),
  PLATFORM_INTERNAL_SECRET: env.secret(),
  ...CommonConfig.shape,
  ...WebhooksConfig.shape,
});
export type EventsConfig = z.infer<typeof EventsConfig>;

export function readConfig(): EventsConfig {
  return loadConfig(EventsConfig);
}
