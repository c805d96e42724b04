import { ConfigError, parseConfig } from './config';
import { databasePoolSettings, DatabaseTimeoutsConfig } from './database';

test('every deployable bounds its waits on PostgreSQL: defaults, overrides and bad values', () => {
  expect(databasePoolSettings(parseConfig(DatabaseTimeoutsConfig, {}))).toEqual({
    connectionTimeoutMillis: 5_000,
    query_timeout: 15_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  const tuned = parseConfig(DatabaseTimeoutsConfig, { DATABASE_CONNECT_TIMEOUT_MS: '1000', DATABASE_QUERY_TIMEOUT_MS: '1500' });
  expect(databasePoolSettings(tuned)).toMatchObject({ connectionTimeoutMillis: 1_000, query_timeout: 1_500 });
  // 0 would mean "no timeout" to node-postgres: refused rather than silently unbounded.
  expect(() => parseConfig(DatabaseTimeoutsConfig, { DATABASE_QUERY_TIMEOUT_MS: '0' })).toThrow(ConfigError);
  expect(() => parseConfig(DatabaseTimeoutsConfig, { DATABASE_CONNECT_TIMEOUT_MS: 'soon' })).toThrow(/DATABASE_CONNECT_TIMEOUT_MS/);
});
