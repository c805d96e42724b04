import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';

/** The advisory lock id `prisma migrate` takes, so the two never run at once. */
const PRISMA_MIGRATE_LOCK = 72707369;

// Prisma's own bookkeeping table, so `prisma migrate deploy` accepts what this runner applied.
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/** Creates the database named in `url` when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!name) throw new Error(`database url has no database name: ${target.origin}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created meanwhile by a concurrent runner
      });
    }
  } finally {
    await client.end();
  }
}

export interface MigrationResult {
  applied: string[];
  skipped: string[];
}

/**
 * Applies `prisma/migrations/<timestamp>_<name>/migration.sql` folders in order, each in its own
 * transaction, recording them in `_prisma_migrations` exactly as Prisma does. An applied migration
 * whose file changed is an error, as with `prisma migrate deploy`.
 */
export async function migrate(url: string, migrationsDir: string, options: { createDatabase?: boolean } = {}): Promise<MigrationResult> {
  if (options.createDatabase ?? true) await ensureDatabase(url);
  const folders = (await readdir(migrationsDir, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const result: MigrationResult = { applied: [], skipped: [] };
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK]);
    await client.query(CREATE_MIGRATIONS_TABLE);
    const done = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      'SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL',
    );
    const applied = new Map(done.rows.map((row) => [row.migration_name, row]));
    for (const name of folders) {
      const sql = await readFile(join(migrationsDir, name, 'migration.sql'), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      const previous = applied.get(name);
      if (previous) {
        if (!previous.finished_at) throw new Error(`migration ${name} failed earlier; resolve it before migrating`);
        if (previous.checksum !== checksum) throw new Error(`migration ${name} was changed after it was applied`);
        result.skipped.push(name);
        continue;
      }
      const id = randomUUID();
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), now(), 1)`,
          [id, checksum, name],
        );
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${name} failed: ${(err as Error).message}`, { cause: err });
      }
      result.applied.push(name);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK]).catch(() => undefined);
    await client.end();
  }
  return result;
}
