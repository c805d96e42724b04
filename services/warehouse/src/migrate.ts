import { join } from 'node:path';
import { loadConfig, migrate } from '@platform/core';
import { WarehouseConfig } from './config';

/**
 * Applies prisma/migrations to WAREHOUSE_DIRECT_DATABASE_URL, else WAREHOUSE_DATABASE_URL (the Kubernetes
 * migration Job runs this): the migration lock is a session-level advisory lock, which a
 * transaction-mode pooler would take on one server connection and release on another.
 */
async function main(): Promise<void> {
  const config = loadConfig(WarehouseConfig.pick({ WAREHOUSE_DATABASE_URL: true, WAREHOUSE_DIRECT_DATABASE_URL: true }));
  const result = await migrate(config.WAREHOUSE_DIRECT_DATABASE_URL ?? config.WAREHOUSE_DATABASE_URL, join(__dirname, '..', 'prisma', 'migrations'));
  process.stdout.write(`warehouse: ${result.applied.length} applied, ${result.skipped.length} already applied\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`warehouse: migration failed: ${err.message}\n`);
  process.exit(1);
});
