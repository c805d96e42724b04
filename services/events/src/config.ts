import { z } from 'zod';
import { env } from '@platform/core';
import { ServiceConfig } from '@platform/webhooks';

export const EventsConfig = ServiceConfig.extend({
  EVENTS_PORT: env.port(4001),
  /** GET /metrics (Prometheus) on a port of its own, apart from the API's; 0 picks a free one. */
  METRICS_PORT: env.port(9101),
  EVENTS_DATABASE_URL: env.url('postgresql://postgres@127.0.0.1:5432/platform_events'),
  /**
   * The same database without the transaction-mode pooler, for migrations and anything that needs a
   * session of its own (contract section 17); unset: EVENTS_DATABASE_URL.
   */
  EVENTS_DIRECT_DATABASE_URL: env.url().optional(),
});
export type EventsConfig = z.infer<typeof EventsConfig>;
