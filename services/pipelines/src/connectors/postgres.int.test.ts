import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { WorkspaceId } from '@platform/core';
import { testDatabaseUrl } from '@platform/testing';
import { testConnectorPolicy } from '../test/app';
import { postgresDestination, workspaceSchema } from './postgres';

// The postgres destination on the real pipelines test database: the first runs of a new workspace
// open their tables at once, in a schema none of them has created yet.

const pool = new pg.Pool({ connectionString: testDatabaseUrl('pipelines'), max: 12 });
const runtime = { ...testConnectorPolicy({ allowPrivate: true }), defaultPool: pool, httpTimeoutMs: 5_000, httpMaxBytes: 1_000_000 };
const schemas: string[] = [];

afterAll(async () => {
  for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
});

test("ten tables of a new workspace's schema opened at once: every one is created, none fails on the schema", async () => {
  const workspaceId = randomUUID() as WorkspaceId;
  schemas.push(workspaceSchema(workspaceId));
  const tables = Array.from({ length: 10 }, (_, i) => `first_run_${i}`);
  const opened = await Promise.allSettled(tables.map((table) => postgresDestination.open({ table }, { workspaceId, runtime })));
  expect(opened.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []))).toEqual([]);
  for (const o of opened) if (o.status === 'fulfilled') await o.value.close();
  const { rows } = await pool.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [
    workspaceSchema(workspaceId),
  ]);
  expect(rows.map((r) => r.table_name)).toEqual([...tables].sort());
});
