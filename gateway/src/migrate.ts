import { join } from 'node:path';
import { loadConfig, migrate } from '@platform/core';
import { GatewayConfig } from './config';

/** The gateway's SQL migrations folder. */
export const MIGRATIONS_DIR = join(__dirname, '..', 'prisma', 'migrations');

/** Applies prisma/migrations to GATEWAY_DATABASE_URL (the Kubernetes migration Job runs this). */
async function main(): Promise<void> {
  const { GATEWAY_DATABASE_URL } = loadConfig(GatewayConfig.pick({ GATEWAY_DATABASE_URL: true }));
  const result = await migrate(GATEWAY_DATABASE_URL, MIGRATIONS_DIR);
  process.stdout.write(`gateway: ${result.applied.length} applied, ${result.skipped.length} already applied\n`);
}

if (require.main === module) {
  main().catch((err: Error) => {
    process.stderr.write(`gateway: migration failed: ${err.message}\n`);
    process.exit(1);
  });
}
