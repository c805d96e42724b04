import { join } from 'node:path';
import { loadConfig, migrate } from '@platform/core';
import { GatewayConfig } from './config';

/** The gateway's SQL migrations folder. */
export const MIGRATIONS_DIR = join(__dirname, '..', 'prisma', 'migrations');

/**
 * Applies prisma/migrations to GATEWAY_DIRECT_DATABASE_URL, else GATEWAY_DATABASE_URL (the Kubernetes
 * migration Job runs this): the migration lock is a session-level advisory lock, which a
 * transaction-mode pooler would take on one server connection and release on another.
 */
async function main(): Promise<void> {
  const config = loadConfig(GatewayConfig.pick({ GATEWAY_DATABASE_URL: true, GATEWAY_DIRECT_DATABASE_URL: true }));
  const result = await migrate(config.GATEWAY_DIRECT_DATABASE_URL ?? config.GATEWAY_DATABASE_URL, MIGRATIONS_DIR);
  process.stdout.write(`gateway: ${result.applied.length} applied, ${result.skipped.length} already applied\n`);
}

if (require.main === module) {
  main().catch((err: Error) => {
    process.stderr.write(`gateway: migration failed: ${err.message}\n`);
    process.exit(1);
  });
}
