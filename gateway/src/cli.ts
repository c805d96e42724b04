#!/usr/bin/env node
import { loadConfig, migrate } from '@platform/core';
import { Redis } from 'ioredis';
import { runCli } from './cli.commands';
import { CliConfig } from './config';
import { createDatabase, type Database } from './database';
import { keysStore, type KeysStore } from './keys.store';
import { MIGRATIONS_DIR } from './migrate';
import { DEFAULT_REDIS_PREFIX } from './redis';
import { redisKeyChangePublisher, type KeyChangePublisher } from './key-changes';

async function main(): Promise<number> {
  const config = loadConfig(CliConfig);
  let db: Database | undefined;
  let redis: Redis | undefined;
  let store: KeysStore | undefined;
  try {
    return await runCli(
      process.argv.slice(2),
      {
        store: () => (store ??= keysStore((db ??= createDatabase(config.GATEWAY_DATABASE_URL, config)))),
        publisher: async (): Promise<KeyChangePublisher> => {
          // One attempt, no retries: a CLI should report an unreachable Redis, not wait for it.
          redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2_000 });
          redis.on('error', () => undefined);
          await redis.connect();
          return redisKeyChangePublisher(redis, DEFAULT_REDIS_PREFIX);
        },
        migrate: () => migrate(config.GATEWAY_DATABASE_URL, MIGRATIONS_DIR),
      },
      { out: (line) => process.stdout.write(`${line}\n`), err: (line) => process.stderr.write(`${line}\n`) },
    );
  } finally {
    await db?.$disconnect();
    redis?.disconnect();
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
