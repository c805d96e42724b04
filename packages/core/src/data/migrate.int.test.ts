import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrate } from './migrate';

const SERVER = process.env.TEST_DATABASE_URL_BASE ?? 'postgresql://postgres@127.0.0.1:5432';

async function dropDatabase(name: string) {
  const client = new pg.Client({ connectionString: `${SERVER}/postgres` });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${name}"`);
  await client.end();
}

test('the runner creates the database, applies each migration once and records it as Prisma does', async () => {
  const name = `platform_migrate_test_${process.pid}`;
  await dropDatabase(name);
  const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
  await mkdir(join(dir, '20240101000000_init'));
  await writeFile(join(dir, '20240101000000_init', 'migration.sql'), 'CREATE TABLE "a" ("id" INTEGER PRIMARY KEY);');
  const url = `${SERVER}/${name}`;
  try {
    expect(await migrate(url, dir)).toEqual({ applied: ['20240101000000_init'], skipped: [] });
    await mkdir(join(dir, '20240102000000_more'));
    await writeFile(join(dir, '20240102000000_more', 'migration.sql'), 'ALTER TABLE "a" ADD COLUMN "b" TEXT;');
    expect(await migrate(url, dir)).toEqual({ applied: ['20240102000000_more'], skipped: ['20240101000000_init'] });

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const rows = (await client.query('SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name'))
      .rows;
    await client.end();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ migration_name: '20240101000000_init', applied_steps_count: 1 });
    expect(rows[0].checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].finished_at).toBeInstanceOf(Date);

    await writeFile(join(dir, '20240101000000_init', 'migration.sql'), 'CREATE TABLE "a" ("id" BIGINT PRIMARY KEY);');
    await expect(migrate(url, dir)).rejects.toThrow(/changed after it was applied/);
  } finally {
    await dropDatabase(name);
  }
});

test('a failing migration is rolled back and not recorded', async () => {
  const name = `platform_migrate_fail_${process.pid}`;
  await dropDatabase(name);
  const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
  await mkdir(join(dir, '20240101000000_bad'));
  await writeFile(join(dir, '20240101000000_bad', 'migration.sql'), 'CREATE TABLE "ok" ("id" INTEGER); SELECT * FROM "missing";');
  const url = `${SERVER}/${name}`;
  try {
    await expect(migrate(url, dir)).rejects.toThrow(/20240101000000_bad failed/);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    expect((await client.query(`SELECT to_regclass('ok') AS t`)).rows[0].t).toBeNull();
    expect((await client.query('SELECT count(*)::int AS n FROM "_prisma_migrations"')).rows[0].n).toBe(0);
    await client.end();
  } finally {
    await dropDatabase(name);
  }
});
