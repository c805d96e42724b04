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
    transactionOptions: databaseTransactionOptions(config),
  });
  return retryWriteConflicts(client);
}
