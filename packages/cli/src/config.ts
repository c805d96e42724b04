import { env, loadConfig } from '@platform/core';
import { GatewayConfig } from '@platform/gateway/config';

/**
 * What the CLI needs: the gateway whose admin API it calls (the same path for key changes as the
 * console's, so every gateway instance hears of them), and the database for `migrate` and
 * `demo-seed`, which run before any gateway does (`migrate` on the direct URL: it takes a session lock).
 */
export const CliConfig = GatewayConfig.pick({
  GATEWAY_DATABASE_URL: true,
  GATEWAY_DIRECT_DATABASE_URL: true,
  DATABASE_CONNECT_TIMEOUT_MS: true,
  DATABASE_QUERY_TIMEOUT_MS: true,
  DATABASE_POOL_MAX: true,
  DATABASE_POOL_TIMEOUT_MS: true,
}).extend({
  PLATFORM_URL: env.url('http://127.0.0.1:8080'),
  /** Required by the commands that call the admin API (all but `migrate` and `demo-seed`). */
  PLATFORM_ADMIN_TOKEN: env.secret().optional(),
});
/** The CLI's variables; a bad one stops the process with one line naming it. */
export const loadCliConfig = () => loadConfig(CliConfig);
export type CliConfig = ReturnType<typeof loadCliConfig>;
