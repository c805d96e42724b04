import pg from 'pg';
import { CommonConfig, ConfigError, parseConfig } from '../process/config';
import {
  DatabaseConfig,
  databasePoolSettings,
  DatabaseTimeoutsConfig,
  databaseTransactionOptions,
  isWriteConflict,
  retryWriteConflicts,
  WRITE_CONFLICT_ATTEMPTS,
} from './database';

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

describe('retryWriteConflicts', () => {
  // What Prisma throws for a raw statement PostgreSQL undid to break a deadlock (captured from adapter-pg 7).
  const deadlock = Object.assign(new Error('Raw query failed. Code: `40P01`. Message: `deadlock detected`'), {
    code: 'P2010',
    meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { originalCode: '40P01', kind: 'TransactionWriteConflict' } } },
  });

  function fakeClient(failures: Error[]) {
    const calls: unknown[][] = [];
    const client = {
      $transaction(...args: unknown[]): Promise<unknown> {
        calls.push(args);
        const failure = failures.shift();
        if (failure) return Promise.reject(failure);
        return typeof args[0] === 'function' ? Promise.resolve((args[0] as (tx: string) => unknown)('tx')) : Promise.resolve('batch');
      },
    };
    return { client: retryWriteConflicts(client), calls };
  }

  test('a transaction PostgreSQL undid runs again, with the same callback and options', async () => {
    const { client, calls } = fakeClient([deadlock, Object.assign(new Error('write conflict'), { code: 'P2034' })]);
    const work = (tx: string) => `done in ${tx}`;
    await expect(client.$transaction(work, { timeout: 1 })).resolves.toBe('done in tx');
    expect(calls).toEqual([
      [work, { timeout: 1 }],
      [work, { timeout: 1 }],
      [work, { timeout: 1 }],
    ]);
  });

  test('it gives up after WRITE_CONFLICT_ATTEMPTS, with the last conflict', async () => {
    const { client, calls } = fakeClient(Array.from({ length: WRITE_CONFLICT_ATTEMPTS }, () => deadlock));
    await expect(client.$transaction(() => 'never')).rejects.toBe(deadlock);
    expect(calls).toHaveLength(WRITE_CONFLICT_ATTEMPTS);
  });

  test('any other error, and the batch form, run once', async () => {
    const timeout = Object.assign(new Error('lock timeout'), { code: '55P03' });
    const once = fakeClient([timeout]);
    await expect(once.client.$transaction(() => 'never')).rejects.toBe(timeout);
    expect(once.calls).toHaveLength(1);
    const batch = fakeClient([deadlock]);
    await expect(batch.client.$transaction([])).rejects.toBe(deadlock);
    expect(batch.calls).toHaveLength(1);
  });

  test('isWriteConflict knows deadlocks and serialization failures however Prisma words them', () => {
    expect(isWriteConflict(deadlock)).toBe(true);
    expect(isWriteConflict({ code: 'P2034' })).toBe(true);
    expect(isWriteConflict({ code: '40001' })).toBe(true);
    expect(isWriteConflict(new Error('wrapped', { cause: { kind: 'TransactionWriteConflict' } }))).toBe(true);
    expect(isWriteConflict({ code: '55P03' })).toBe(false);
    expect(isWriteConflict(new Error('deadlock detected'))).toBe(false);
  });
});
