import { join } from 'node:path';
import { loadConfig, migrate } from '@platform/core';
import { PipelinesConfig } from './config';

/** Applies prisma/migrations to PIPELINES_DATABASE_URL (the Kubernetes migration Job runs this). */
async function main(): Promise<void> {
  const { PIPELINES_DATABASE_URL } = loadConfig(PipelinesConfig.pick({ PIPELINES_DATABASE_URL: true }));
  const result = await migrate(PIPELINES_DATABASE_URL, join(__dirname, '..', 'prisma', 'migrations'));
  process.stdout.write(`pipelines: ${result.applied.length} applied, ${result.skipped.length} already applied\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`pipelines: migration failed: ${err.message}\n`);
  process.exit(1);
});
