import pg from 'pg';
import type { Express } from 'express';
import { createLogger, createServiceApp } from '@platform/core';
import { TEST_INTERNAL_SECRET, testDatabaseUrl } from '@platform/testing';
import { webhooksRouter } from '../endpoints.routes';
import type { ResolveHost } from '../address-guard';
import { pgSql, type Sql } from '../sql';

/** A pool on the package's test database and its Sql. */
export function testSql(): { pool: pg.Pool; sql: Sql } {
  const pool = new pg.Pool({ connectionString: testDatabaseUrl('webhooks'), max: 10 });
  return { pool, sql: pgSql(pool) };
}

/** The webhook routes in the app every service shares, as a service mounts them. */
export function testApp(sql: Sql, options: { allowPrivate: boolean; resolve?: ResolveHost }): Express {
  return createServiceApp({
    service: 'events',
    logger: createLogger('webhooks-test', 'silent'),
    internalSecret: TEST_INTERNAL_SECRET,
    routes: webhooksRouter({ sql, ...options }),
    ready: async () => {
      await sql.$queryRawUnsafe('SELECT 1');
    },
  });
}
