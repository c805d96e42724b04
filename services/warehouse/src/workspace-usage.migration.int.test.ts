import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { type WorkspaceId } from '@platform/core';
import { migrationTestDatabase } from '@platform/testing';
import { createDatabase } from './database';
import { warehouseStore } from './warehouse.store';

// The workspace-usage migration on a database of this file's own: migrated up to the migration
// before it, given items and locations in several workspaces, then migrated to the end.
const WORKSPACE_USAGE = '20241220000000_workspace_usage';
const database = migrationTestDatabase('warehouse', join(__dirname, '..', 'prisma', 'migrations'), WORKSPACE_USAGE);
const { sql } = database;

afterAll(() => database.drop());

test('each workspace starts counted with the items and locations it already has; the count then refuses one past the limit', async () => {
  const previous = await database.migrateBefore();
  expect(previous.applied).not.toContain(WORKSPACE_USAGE);
  expect(previous.applied.at(-1)! < WORKSPACE_USAGE).toBe(true);

  const [both, onlyItems, onlyLocations, empty] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const locations = async (workspace: string, count: number) => {
    for (let n = 0; n < count; n++) {
      await sql.query(`INSERT INTO "locations" ("id", "workspace_id", "name", "code") VALUES ($1, $2, 'Aisle', $3)`, [randomUUID(), workspace, `L${n}`]);
    }
  };
  const items = async (workspace: string, count: number) => {
    for (let n = 0; n < count; n++) {
      await sql.query(`INSERT INTO "items" ("id", "workspace_id", "sku", "name") VALUES ($1, $2, $3, 'Widget')`, [randomUUID(), workspace, `SKU-${n}`]);
    }
  };
  await items(both, 3);
  await locations(both, 2);
  await items(onlyItems, 4);
  await locations(onlyLocations, 1);

  const result = await database.migrateRest();
  expect(result.applied[0]).toBe(WORKSPACE_USAGE);

  const usage = await sql.query(`SELECT "workspace_id", "items", "locations" FROM "workspace_usage"`);
  expect(Object.fromEntries(usage.rows.map((row) => [row.workspace_id, [row.items, row.locations]]))).toEqual({
    [both]: [3, 2],
    [onlyItems]: [4, 0],
    [onlyLocations]: [0, 1],
  });
  expect(usage.rows.map((row) => row.workspace_id)).not.toContain(empty);

  // The index that counts a workspace's active reservations is there.
  const indexes = await sql.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'reservations_active_workspace_id_expires_at_idx'`);
  expect(indexes.rows).toEqual([
    { indexdef: expect.stringMatching(/ON public\.reservations USING btree \(workspace_id, expires_at\) WHERE \(status = 'active'::reservation_status\)$/) },
  ]);
  // The stores count on from there: `both` has 3 items and 2 locations.
  const db = createDatabase(database.url);
  try {
    const store = warehouseStore(db);
    const fields = (sku: string) => ({ sku, name: 'Widget', category: null, minStock: null, locationId: null, metadata: {} });
    const now = new Date();
    expect(await store.createItem(both as WorkspaceId, fields('NEW-1'), now, 3)).toEqual({ refused: 'limit_reached', quota: 'items', limit: 3 });
    expect(await store.createItem(both as WorkspaceId, fields('NEW-1'), now, 4)).toMatchObject({ sku: 'NEW-1' });
    expect(await store.createLocation(both as WorkspaceId, { name: 'Aisle', code: 'NEW' }, 2)).toEqual({
      refused: 'limit_reached',
      quota: 'locations',
      limit: 2,
    });
    expect(await store.createLocation(empty as WorkspaceId, { name: 'Aisle', code: 'NEW' }, 1)).toMatchObject({ code: 'NEW' });
  } finally {
    await db.$disconnect();
  }
  const after = await sql.query(`SELECT "workspace_id", "items", "locations" FROM "workspace_usage" WHERE "workspace_id" = ANY($1::uuid[])`, [[both, empty]]);
  expect(Object.fromEntries(after.rows.map((row) => [row.workspace_id, [row.items, row.locations]]))).toEqual({ [both]: [4, 2], [empty]: [0, 1] });
  // A count never goes below 0.
  await expect(sql.query(`UPDATE "workspace_usage" SET "items" = -1 WHERE "workspace_id" = $1`, [both])).rejects.toThrow(/workspace_usage_items_not_negative/);
});
