import { randomUUID } from 'node:crypto';

/** The secret that test apps and test requests share. */
export const TEST_INTERNAL_SECRET = 'test-internal-secret-0123456789abcdef';

/**
 * The gateway's REDIS_COMMAND_TIMEOUT_MS in tests (production: 100 ms): on a loaded machine a
 * working Redis can be 100 ms late, and a test that is not about a failing Redis must not see it
 * as down. A test of the fail-fast behaviour sets the production value itself.
 */
export const TEST_REDIS_COMMAND_TIMEOUT_MS = 2_000;

/** A test database per service, beside (never on) the development one. */
export function testDatabaseUrl(service: string): string {
  const variable = `${service.toUpperCase()}_TEST_DATABASE_URL`;
  const base = process.env.TEST_DATABASE_URL_BASE ?? 'postgresql://postgres@127.0.0.1:5432';
  return process.env[variable] ?? `${base}/platform_${service}_test`;
}

/** The tests' Redis: TEST_REDIS_URL, else REDIS_URL, else the local one. */
export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
}

/**
 * A platform or database name of one test run (`[a-z0-9_]`): two checkouts testing on one
 * PostgreSQL server at once never drop each other's databases.
 */
export function uniqueDatabaseName(label: string): string {
  return `${label}_${randomUUID().slice(0, 8)}`;
}

/** A short unique prefix for Redis keys and queue names of one test. */
export function uniqueName(label: string): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}
