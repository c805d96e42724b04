import { PrismaPg } from '@prisma/adapter-pg';
import { databasePoolSettings, databaseTransactionOptions, type DatabaseConfig } from '@platform/core';
import { PrismaClient } from './generated/prisma/client';

export type Database = PrismaClient;

/** Prisma Client over node-postgres (no engine binary): a bounded pool, with bounded waits for a connection and a query. */
export function createDatabase(url: string, config: Partial<DatabaseConfig> = {}): Database {
  return new PrismaClient({
    adapter: new PrismaPg({ connectionString: url, ...databasePoolSettings(config) }),
    transactionOptions: databaseTransactionOptions(config),
  });
}
