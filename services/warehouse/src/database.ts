import { PrismaPg } from '@prisma/adapter-pg';
import { databasePoolSettings, databaseTransactionOptions, retryWriteConflicts, type DatabaseConfig } from '@platform/core';
import { PrismaClient } from './generated/prisma/client';

export type Database = PrismaClient;

/**
 * Prisma Client over node-postgres (no engine binary): a bounded pool, with bounded waits for a
 * connection and a query; a transaction PostgreSQL undoes to break a deadlock runs again.
 */
export function createDatabase(url: string, config: Partial<DatabaseConfig> = {}): Database {
  const client = new PrismaClient({
    adapter: new PrismaPg({ connectionString: url, ...databasePoolSettings(config) }),
    // Stock adjustments of one item queue on its row lock; under a burst a transaction may wait
    // for a pooled connection longer than Prisma's 2 s default before it starts: as long as the pool
    // lets any query wait (DATABASE_POOL_TIMEOUT_MS).
    transactionOptions: { ...databaseTransactionOptions(config), timeout: 10_000 },
  });
  return retryWriteConflicts(client);
}
