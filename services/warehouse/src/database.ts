import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client';

export type Database = PrismaClient;

/** Prisma Client over node-postgres (no engine binary). */
export function createDatabase(url: string): Database {
  return new PrismaClient({
    adapter: new PrismaPg({ connectionString: url }),
    // Stock adjustments of one item queue on its row lock; under a burst a transaction may wait
    // for a pooled connection longer than Prisma's 2 s default before it starts.
    transactionOptions: { maxWait: 10_000, timeout: 10_000 },
  });
}
