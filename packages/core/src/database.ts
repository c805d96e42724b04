import { z } from 'zod';

/**
 * How long a deployable waits on PostgreSQL. Without bounds, a database that stops answering
 * (a network partition, not a refused connection) holds each request and its pooled connection
 * until TCP gives up, minutes later; with them the request fails as a 503 and the pool moves on.
 */
export const DatabaseTimeoutsConfig = z.object({
  /** Opening a connection (TCP + startup) longer than this fails. */
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  /** A query without an answer for this long fails client-side (the server may still finish it). */
  DATABASE_QUERY_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
});
export type DatabaseTimeoutsConfig = z.infer<typeof DatabaseTimeoutsConfig>;

/** node-postgres pool settings (as given to @prisma/adapter-pg) for the configured timeouts. */
export function databasePoolSettings(config: DatabaseTimeoutsConfig) {
  return {
    connectionTimeoutMillis: config.DATABASE_CONNECT_TIMEOUT_MS,
    query_timeout: config.DATABASE_QUERY_TIMEOUT_MS,
    // Lets the kernel notice a dead peer on an idle pooled connection.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}
