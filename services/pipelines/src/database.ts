import { PrismaPg } from '@prisma/adapter-pg';
import { databasePoolSettings, DatabaseTimeoutsConfig } from '@platform/core';
import { PrismaClient } from './generated/prisma/client';

export type Database = PrismaClient;

/** Prisma Client over node-postgres (no engine binary), with bounded connect and query waits. */
export function createDatabase(url: string, timeouts: DatabaseTimeoutsConfig = DatabaseTimeoutsConfig.parse({})): Database {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: url, ...databasePoolSettings(timeouts) }) });
}
