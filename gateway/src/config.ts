import { z } from 'zod';
import { env, loadConfig } from '@platform/core';

export const GatewayConfig = z.object({
  GATEWAY_PORT: env.port(8080),
  GATEWAY_DATABASE_URL: env.url('postgresql://postgres@127.0.0.1:5432/platform_gateway'),
  REDIS_URL: env.url('redis://127.0.0.1:6379'),
  PLATFORM_ADMIN_TOKEN: env.secret(),
  PLATFORM_INTERNAL_SECRET: env.secret(),
  EVENTS_URL: env.url('http://127.0.0.1:4001'),
  WAREHOUSE_URL: env.url('http://127.0.0.1:4002'),
  PIPELINES_URL: env.url('http://127.0.0.1:4003'),
  GATEWAY_UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(1).default(10_000),
  /** 400 while events is beta v0; 800 once GA (contract section 6). */
  EVENTS_RATE_LIMIT: z.coerce.number().int().min(1).default(400),
  LOG_LEVEL: env.logLevel(),
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;

export function readConfig(): GatewayConfig {
  return loadConfig(GatewayConfig);
}

/** What the CLI needs: the database, and Redis to announce revocations. */
export const CliConfig = GatewayConfig.pick({ GATEWAY_DATABASE_URL: true, REDIS_URL: true });
export type CliConfig = z.infer<typeof CliConfig>;
