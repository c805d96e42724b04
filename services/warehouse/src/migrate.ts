import { join } from 'node:path';
import { loadConfig, migrate } from '@platform/core';
import { WarehouseConfig } from './config';

/** Applies prisma/migrations to WAREHOUSE_DATABASE_URL (the Kubernetes migration Job runs this). */
async function main(): Promise<void> {
  const { WAREHOUSE_DATABASE_URL } = loadConfig(WarehouseConfig.pick({ WAREHOUSE_DATABASE_URL: true }));
  const result = await migrate(WAREHOUSE_DATABASE_URL, join(__dirname, '..', 'prisma', 'migrations'));
  process.stdout.write(`warehouse: ${result.applied.length} applied, ${result.skipped.length} already applied\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`warehouse: migration failed: ${err.message}\n`);
  process.exit(1);
});
