#!/usr/bin/env node
import type { AdminClient } from '@platform/client';
import type { Database } from '@platform/gateway/database';
import type { GatewayStores } from '@platform/gateway/keys.store';
import type { CliConfig } from './config';
import type { CliDeps } from './context';
import { runCli } from './program';

// Everything heavy (core with its config schemas, the gateway's modules, Prisma) loads on first
// use, inside the command that needs it: `platform --help` loads commander and the client only.
let config: CliConfig | undefined;
let admin: AdminClient | undefined;
let db: Database | undefined;
let stores: GatewayStores | undefined;

const loadConfig = async (): Promise<CliConfig> => (config ??= (await import('./config.js')).loadCliConfig());

const deps: CliDeps = {
  admin: async () => {
    const { PLATFORM_URL, PLATFORM_ADMIN_TOKEN } = await loadConfig();
    if (!PLATFORM_ADMIN_TOKEN) throw new Error(`PLATFORM_ADMIN_TOKEN is required to call the admin API at ${PLATFORM_URL}`);
    const { createAdminClient } = await import('@platform/client');
    return (admin ??= createAdminClient({ baseUrl: PLATFORM_URL, adminToken: PLATFORM_ADMIN_TOKEN }));
  },
  stores: async () => {
    const cliConfig = await loadConfig();
    const [{ createDatabase }, { gatewayStores }] = await Promise.all([import('@platform/gateway/database'), import('@platform/gateway/keys.store')]);
    return (stores ??= gatewayStores((db ??= createDatabase(cliConfig.GATEWAY_DATABASE_URL, cliConfig))));
  },
  migrate: async () => {
    const cliConfig = await loadConfig();
    const [{ migrate }, { MIGRATIONS_DIR }] = await Promise.all([import('@platform/core'), import('@platform/gateway/migrate')]);
    // A session-level advisory lock serialises migrators: not through a transaction-mode pooler.
    return migrate(cliConfig.GATEWAY_DIRECT_DATABASE_URL ?? cliConfig.GATEWAY_DATABASE_URL, MIGRATIONS_DIR);
  },
};

async function main(): Promise<number> {
  try {
    return await runCli(process.argv.slice(2), deps, {
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
    });
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
