import { join } from 'node:path';
import { loadConfig, migrate } from '@platform/core';
import { EventsConfig } from './config';

/** Applies prisma/migrations to EVENTS_DATABASE_URL (the Kubernetes migration Job runs this). */
async function main(): Promise<void> {
  const { EVENTS_DATABASE_URL } = loadConfig(EventsConfig.pick({ EVENTS_DATABASE_URL: true }));
  const result = await migrate(EVENTS_DATABASE_URL, join(__dirname, '..', 'prisma', 'migrations'));
  process.stdout.write(`events: ${result.applied.length} applied, ${result.skipped.length} already applied\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`events: migration failed: ${err.message}\n`);
  process.exit(1);
});
