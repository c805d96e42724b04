import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrate, type MigrationResult } from '@platform/core';
import { testDatabaseUrl, uniqueDatabaseName } from './test-env';

/** A database of one test of one migration: given rows in the schema before it, then migrated. */
export interface MigrationTestDatabase {
  url: string;
  /** A client of the database, connected by migrateBefore. */
  sql: pg.Client;
  /** Creates the database, applies every migration before the one under test (which must exist) and connects `sql`. */
  migrateBefore(): Promise<MigrationResult>;
  /** Applies the rest: the migration under test and any after it. */
  migrateRest(): Promise<MigrationResult>;
  /** Ends `sql`, drops the database (whoever is still connected) and the copy of the earlier migrations. */
  drop(): Promise<void>;
}

/**
 * A fresh database on the service's test server for testing `migration` (a folder name under
 * `migrationsDir`) on data written before it.
 */
export function migrationTestDatabase(service: string, migrationsDir: string, migration: string): MigrationTestDatabase {
  const url = testDatabaseUrl(uniqueDatabaseName(`${service}_migration`));
  const sql = new pg.Client({ connectionString: url });
  let earlier: string | undefined;
  return {
    url,
    sql,
    async migrateBefore() {
      const folders = readdirSync(migrationsDir, { withFileTypes: true }).filter((entry) => entry.isDirectory());
      if (!folders.some((entry) => entry.name === migration)) throw new Error(`no migration ${migration} in ${migrationsDir}`);
      earlier = mkdtempSync(join(tmpdir(), `${service}-migrations-`));
      for (const entry of folders) {
        if (entry.name < migration) cpSync(join(migrationsDir, entry.name), join(earlier, entry.name), { recursive: true });
      }
      const result = await migrate(url, earlier);
      await sql.connect();
      return result;
    },
    migrateRest: () => migrate(url, migrationsDir),
    async drop() {
      await sql.end().catch(() => undefined);
      if (earlier) rmSync(earlier, { recursive: true, force: true });
      const admin = new pg.Client({ connectionString: testDatabaseUrl(service) });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${new URL(url).pathname.slice(1)}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}
