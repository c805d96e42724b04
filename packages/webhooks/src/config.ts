import { z } from 'zod';
import { env } from '@platform/core';

const durations = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'must be comma-separated milliseconds')
  .transform((value) => value.split(',').map(Number));

/**
 * The webhook variables; a service adds them to its own config schema
 * (`ServiceConfig.extend(WebhooksConfig.shape)`) and parses once at start.
 */
export const WebhooksConfig = z.object({
  /** Accept private and loopback targets (tests, local use only). */
  WEBHOOKS_ALLOW_PRIVATE: env.boolean(false),
  /** Delays before each retry in ms; unset = the contract's 5 s ... 10 h. */
  WEBHOOKS_RETRY_SCHEDULE_MS: durations.optional(),
  WEBHOOKS_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  WEBHOOKS_RELAY_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
});
export type WebhooksConfig = z.infer<typeof WebhooksConfig>;

/** Webhook settings for integration tests: loopback receivers, retries within milliseconds. */
export const TEST_WEBHOOKS_CONFIG: WebhooksConfig = {
  WEBHOOKS_ALLOW_PRIVATE: true,
  WEBHOOKS_RETRY_SCHEDULE_MS: [50, 100],
  WEBHOOKS_TIMEOUT_MS: 2000,
  WEBHOOKS_RELAY_POLL_MS: 50,
};
