import { join } from 'node:path';
import pg from 'pg';
import type { Express } from 'express';
import { createLogger, createServiceApp } from '@platform/core';
import { prepareTestDatabase, TEST_INTERNAL_SECRET, testDatabaseUrl } from '@platform/testing';
import { webhooksRouter } from '../endpoints.routes';
import type { Resolver } from '@platform/address-guard';
import type { ResendQueue } from '../deliveries.resend';
import { pgSql, type Sql } from '../sql';
import { webhooksStore } from '../webhooks.store';

/** A pool on the package's test database and its Sql. */
export function testSql(): { pool: pg.Pool; sql: Sql } {
  const pool = new pg.Pool({ connectionString: testDatabaseUrl('webhooks'), max: 10 });
  return { pool, sql: pgSql(pool) };
}

/**
 * A test database of its own (`testDatabaseUrl(name)`), created afresh with the package's test
 * migrations, as jest.global-setup.js does for the package's own one: for relays that must not
 * take the outbox rows of other test files, or for a second platform.
 */
export async function freshTestDatabase(name: string): Promise<{ pool: pg.Pool; sql: Sql }> {
  const url = testDatabaseUrl(name);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${decodeURIComponent(new URL(url).pathname.slice(1)).replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
  await prepareTestDatabase(url, join(__dirname, '..', '..', 'test', 'migrations'));
  const pool = new pg.Pool({ connectionString: url, max: 5 });
  return { pool, sql: pgSql(pool) };
}

/** The webhook routes in the app every service shares, with the internal usage route, as a service mounts them. */
export function testApp(sql: Sql, options: { allowPrivate: boolean; resolve?: Resolver; queue?: ResendQueue }): Express {
  const store = webhooksStore(sql);
  return createServiceApp({
    service: 'events',
    logger: createLogger('webhooks-test', 'silent'),
    internalSecret: TEST_INTERNAL_SECRET,
    routes: webhooksRouter({ store, ...options }),
    ready: { database: () => sql.$queryRawUnsafe('SELECT 1') },
    usage: (workspaceId) => store.usage(workspaceId),
  });
}
