import { join } from 'node:path';
import { loadConfig, migrate } from '@platform/core';
import { EventsConfig } from './config';

/**
 * Applies prisma/migrations to EVENTS_DIRECT_DATABASE_URL, else EVENTS_DATABASE_URL (the Kubernetes
 * migration Job runs this): the migration lock is a session-level advisory lock, which a
 * transaction-mode pooler would take on one server connection and release on another.
 */
async function main(): Promise<void> {
  const config = loadConfig(EventsConfig.pick({ EVENTS_DATABASE_URL: true, EVENTS_DIRECT_DATABASE_URL: true }));
  const result = await migrate(config.EVENTS_DIRECT_DATABASE_URL ?? config.EVENTS_DATABASE_URL, join(__dirname, '..', 'prisma', 'migrations'));
  process.stdout.write(`events: ${result.applied.length} applied, ${result.skipped.length} already applied\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`events: migration failed: ${err.message}\n`);
  process.exit(1);
});
