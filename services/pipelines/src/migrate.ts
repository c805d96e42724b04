import { join } from 'node:path';
import { loadConfig, migrate } from '@platform/core';
import { PipelinesConfig } from './config';

/**
 * Applies prisma/migrations to PIPELINES_DIRECT_DATABASE_URL, else PIPELINES_DATABASE_URL (the Kubernetes
 * migration Job runs this): the migration lock is a session-level advisory lock, which a
 * transaction-mode pooler would take on one server connection and release on another.
 */
async function main(): Promise<void> {
  const config = loadConfig(PipelinesConfig.pick({ PIPELINES_DATABASE_URL: true, PIPELINES_DIRECT_DATABASE_URL: true }));
  const result = await migrate(config.PIPELINES_DIRECT_DATABASE_URL ?? config.PIPELINES_DATABASE_URL, join(__dirname, '..', 'prisma', 'migrations'));
  process.stdout.write(`pipelines: ${result.applied.length} applied, ${result.skipped.length} already applied\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`pipelines: migration failed: ${err.message}\n`);
  process.exit(1);
});
