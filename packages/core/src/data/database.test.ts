import pg from 'pg';
import { CommonConfig, ConfigError, parseConfig } from '../process/config';
import { DatabaseConfig, databasePoolSettings, DatabaseTimeoutsConfig, databaseTransactionOptions } from './database';

test('every deployable bounds its waits on PostgreSQL: defaults, overrides and bad values', () => {
  expect(databasePoolSettings(parseConfig(DatabaseTimeoutsConfig, {}))).toEqual({
    max: 10,
    connectionTimeoutMillis: 5_000,
    Client: expect.any(Function),
    query_timeout: 15_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  const tuned = parseConfig(DatabaseTimeoutsConfig, { DATABASE_CONNECT_TIMEOUT_MS: '1000', DATABASE_QUERY_TIMEOUT_MS: '1500' });
  expect(databasePoolSettings(tuned)).toMatchObject({ query_timeout: 1_500 });
  // 0 would mean "no timeout" to node-postgres: refused rather than silently unbounded.
  expect(() => parseConfig(DatabaseTimeoutsConfig, { DATABASE_QUERY_TIMEOUT_MS: '0' })).toThrow(ConfigError);
  expect(() => parseConfig(DatabaseTimeoutsConfig, { DATABASE_CONNECT_TIMEOUT_MS: 'soon' })).toThrow(/DATABASE_CONNECT_TIMEOUT_MS/);
});

test('DATABASE_POOL_MAX and DATABASE_POOL_TIMEOUT_MS (contract section 17): every process reads them, defaults 10 and 5,000', () => {
  const common = parseConfig(CommonConfig, {});
  expect(common).toMatchObject({ DATABASE_POOL_MAX: 10, DATABASE_POOL_TIMEOUT_MS: 5_000 });
  const tuned = parseConfig(DatabaseConfig, { DATABASE_POOL_MAX: '3', DATABASE_POOL_TIMEOUT_MS: '750' });
  expect(databasePoolSettings(tuned)).toMatchObject({ max: 3, connectionTimeoutMillis: 750 });
  // An interactive transaction waits for its connection as long as a query does, not Prisma's 2 s.
  expect(databaseTransactionOptions(tuned)).toEqual({ maxWait: 750 });
  expect(databaseTransactionOptions()).toEqual({ maxWait: 5_000 });
  // A variable left out of a partial config takes its default, an undefined one too.
  expect(databasePoolSettings({ DATABASE_POOL_MAX: undefined })).toMatchObject({ max: 10 });
  // 0 would mean "wait forever" to pg-pool, and a pool of 0 connections serves nothing.
  expect(() => parseConfig(DatabaseConfig, { DATABASE_POOL_TIMEOUT_MS: '0' })).toThrow(/DATABASE_POOL_TIMEOUT_MS/);
  expect(() => parseConfig(DatabaseConfig, { DATABASE_POOL_MAX: '0' })).toThrow(/DATABASE_POOL_MAX/);
  expect(() => parseConfig(DatabaseConfig, { DATABASE_POOL_MAX: 'ten' })).toThrow(ConfigError);
});

test('a pooled connection opening gives up after DATABASE_CONNECT_TIMEOUT_MS, keeping the password pg-pool hides', () => {
  const { Client } = databasePoolSettings({ DATABASE_CONNECT_TIMEOUT_MS: 1_234, DATABASE_POOL_TIMEOUT_MS: 9_000 });
  // What pg-pool hands a new Client: its own options, `password` made non-enumerable.
  const poolOptions = new pg.Pool({ host: '127.0.0.1', user: 'u', password: 'secret', connectionTimeoutMillis: 9_000 }).options;
  const client = new Client(poolOptions) as pg.Client & { _connectionTimeoutMillis: number };
  expect(client._connectionTimeoutMillis).toBe(1_234);
  expect(client.password).toBe('secret');
  expect(client).toBeInstanceOf(pg.Client);
});
