import { z } from 'zod';
import { DatabaseTimeoutsConfig, env, loadConfig } from '@platform/core';
import { WebhooksConfig } from '@platform/webhooks';

export const EventsConfig = z.object({
  EVENTS_PORT: env.port(4001),
  /** GET /metrics (Prometheus) on a port of its own, apart from the API's; 0 picks a free one. */
  METRICS_PORT: env.port(9101),
  /** The address every port of this process listens on: 127.0.0.1 (this machine only) unless set; containers set 0.0.0.0. */
  HOST: env.host(),
  EVENTS_DATABASE_URL: env.url('postgresql://postgres@127.0.0.1:5432/platform_events'),
  REDIS_URL: env.url('redis://127.0.0.1:6379'),
  PLATFORM_INTERNAL_SECRET: env.secret(),
  LOG_LEVEL: env.logLevel(),
  ...WebhooksConfig.shape,
  ...DatabaseTimeoutsConfig.shape,
});
export type EventsConfig = z.infer<typeof EventsConfig>;

export function readConfig(): EventsConfig {
  return loadConfig(EventsConfig);
}
