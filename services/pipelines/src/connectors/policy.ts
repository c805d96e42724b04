import { z } from 'zod';
import { createAddressGuard, type Resolver } from '@platform/address-guard';
import { env } from '@platform/core';
import type { ConnectorPolicy } from './connector';

/** The deployables' default database names (gateway/src/config.ts and each service's config.ts). */
export const DEFAULT_PLATFORM_DATABASES = ['platform_gateway', 'platform_events', 'platform_warehouse', 'platform_pipelines'] as const;

/** The connector settings the API (create checks) and the worker (connect checks) share. */
export const ConnectorsConfig = z.object({
  /** http-json sources and postgres destinations may reach loopback and private addresses (local use, tests). */
  CONNECTORS_ALLOW_PRIVATE: env.boolean(false),
  /**
   * Comma-separated databases of the platform itself that a connection_url may never name, even
   * with CONNECTORS_ALLOW_PRIVATE, besides the default names and the pipelines database's own
   * (both always refused): the launchers set it to the names a deployment really uses.
   */
  PIPELINES_PLATFORM_DATABASES: z
    .string()
    .default('')
    .transform((list) =>
      list
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== ''),
    ),
});
export type ConnectorsConfig = z.output<typeof ConnectorsConfig>;

/** The default names, the configured databases and the pipelines database's own (its URL's path), in lower case. */
export function platformDatabases(configured: readonly string[], pipelinesDatabaseUrl: string): ReadonlySet<string> {
  const own = decodeURIComponent(new URL(pipelinesDatabaseUrl).pathname.replace(/^\//, ''));
  return new Set([...DEFAULT_PLATFORM_DATABASES, ...configured, ...(own ? [own] : [])].map((name) => name.toLowerCase()));
}

/** The policy connectors are judged by, from the process's config; `resolve` replaces DNS in tests. */
export function connectorPolicy(config: ConnectorsConfig & { PIPELINES_DATABASE_URL: string }, resolve?: Resolver): ConnectorPolicy {
  return {
    addressGuard: createAddressGuard({ allowPrivate: config.CONNECTORS_ALLOW_PRIVATE, resolve }),
    platformDatabases: platformDatabases(config.PIPELINES_PLATFORM_DATABASES, config.PIPELINES_DATABASE_URL),
  };
}
