import { z } from 'zod';
import { CommonConfig, env } from '@platform/core';
import { WebhooksConfig } from './config';

/**
 * What every service process reads besides its own port and database: the gateway's signing
 * secret, the variables of every process, and its webhooks' settings. A service's schema extends it.
 */
export const ServiceConfig = z.object({
  PLATFORM_INTERNAL_SECRET: env.secret(),
  ...CommonConfig.shape,
  ...WebhooksConfig.shape,
});
export type ServiceConfig = z.infer<typeof ServiceConfig>;
