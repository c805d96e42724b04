#!/usr/bin/env node
import { createAdminClient, type AdminClient } from '@platform/client';
import { loadConfig, migrate } from '@platform/core';
import { runCli } from './cli.commands';
import { CliConfig } from './config';
import { createDatabase, type Database } from './database';
import { gatewayStores, type GatewayStores } from './keys.store';
import { MIGRATIONS_DIR } from './migrate';

async function main(): Promise<number> {
  const config = loadConfig(CliConfig);
  let db: Database | undefined;
  let store: GatewayStores | undefined;
  let admin: AdminClient | undefined;
  try {
    return await runCli(
      process.argv.slice(2),
      {
        admin: () => {
          if (!config.PLATFORM_ADMIN_TOKEN) throw new Error(`PLATFORM_ADMIN_TOKEN is required to call the admin API at ${config.PLATFORM_URL}`);
          return (admin ??= createAdminClient({ baseUrl: config.PLATFORM_URL, adminToken: config.PLATFORM_ADMIN_TOKEN }));
        },
        store: () => (store ??= gatewayStores((db ??= createDatabase(config.GATEWAY_DATABASE_URL, config)))),
        // A session-level advisory lock serialises migrators: not through a transaction-mode pooler.
        migrate: () => migrate(config.GATEWAY_DIRECT_DATABASE_URL ?? config.GATEWAY_DATABASE_URL, MIGRATIONS_DIR),
      },
      { out: (line) => process.stdout.write(`${line}\n`), err: (line) => process.stderr.write(`${line}\n`) },
    );
  } finally {
    await db?.$disconnect();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: Error) => {
    process.stderr.write(`platform: ${err.message}\n`);
    process.exitCode = 1;
  },
);
