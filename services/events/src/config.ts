import { z } from 'zod';
import { DEFAULT_WORKSPACE_LIMITS, env, type WorkspaceLimitName } from '@platform/core';
import { ServiceConfig } from '@platform/webhooks';

/** What one workspace may keep in the events service (EVENTS_WORKSPACE_MAX_*), as the app is given it. */
export type EventsLimits = Record<Extract<WorkspaceLimitName, 'events' | 'tickets'>, number>;

/** Core's defaults of the events service's limits. */
export const DEFAULT_EVENTS_LIMITS: Readonly<EventsLimits> = Object.freeze({
  events: DEFAULT_WORKSPACE_LIMITS.events,
  tickets: DEFAULT_WORKSPACE_LIMITS.tickets,
});

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
  /** Between the end of one sweep of unmatched offline scans (kept 7 days, contract section 20) and the next. */
  EVENTS_SCAN_RETENTION_INTERVAL_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(3_600_000),
  /** Scans deleted per statement by that sweep. */
  EVENTS_SCAN_RETENTION_BATCH: z.coerce.number().int().min(1).max(10_000).default(1_000),
  /** Events one workspace may keep; a create past it is 409 quota_exceeded (`quota: "events"`). */
  EVENTS_WORKSPACE_MAX_EVENTS: env.limit(DEFAULT_EVENTS_LIMITS.events),
  /** Tickets one workspace may keep, over all its events together; a create past it is 409 quota_exceeded (`quota: "tickets"`). */
  EVENTS_WORKSPACE_MAX_TICKETS: env.limit(DEFAULT_EVENTS_LIMITS.tickets),
});
export type EventsConfig = z.infer<typeof EventsConfig>;

/** The limits the configuration gives. */
export function eventsLimits(config: Pick<EventsConfig, 'EVENTS_WORKSPACE_MAX_EVENTS' | 'EVENTS_WORKSPACE_MAX_TICKETS'>): EventsLimits {
  return { events: config.EVENTS_WORKSPACE_MAX_EVENTS, tickets: config.EVENTS_WORKSPACE_MAX_TICKETS };
}
