import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { migrationTestDatabase } from '@platform/testing';

// The stock-levels migration on a database of this file's own: migrated up to the migration before
// it, given items with stock, then migrated to the end.
const STOCK_LEVELS = '20241215000000_stock_levels';
const database = migrationTestDatabase('warehouse', join(__dirname, '..', 'prisma', 'migrations'), STOCK_LEVELS);
const { sql } = database;

afterAll(() => database.drop());

test("today's quantities become levels at each item's default location (else unassigned); past adjustments name the location of their time", async () => {
  const previous = await database.migrateBefore();
  expect(previous.applied).not.toContain(STOCK_LEVELS);
  expect(previous.applied.at(-1)! < STOCK_LEVELS).toBe(true);

  const workspace = randomUUID();
  const [aisle, shelf] = [randomUUID(), randomUUID()];
  for (const [id, code] of [
    [aisle, 'AISLE'],
    [shelf, 'SHELF'],
  ]) {
    await sql.query(`INSERT INTO "locations" ("id", "workspace_id", "name", "code") VALUES ($1, $2, $3, $3)`, [id, workspace, code]);
  }
  const item = async (sku: string, locationId: string | null, quantity: number) => {
    const id = randomUUID();
    await sql.query(`INSERT INTO "items" ("id", "workspace_id", "sku", "name", "location_id", "quantity") VALUES ($1, $2, $3, $3, $4, $5)`, [
      id,
      workspace,
      sku,
      locationId,
      quantity,
    ]);
    return id;
  };
  const moved = await item('MOVED', aisle, 7);
  const unplaced = await item('UNPLACED', null, 3);
  const empty = await item('EMPTY', shelf, 0);
  const placed = await item('PLACED', shelf, 12);

  // MOVED: adjusted at the shelf, moved to the aisle, adjusted there; UNPLACED: adjusted at no location.
  const at = (minutes: number) => new Date(Date.UTC(2024, 11, 1, 9, minutes));
  const adjustment = async (itemId: string, delta: number, when: Date) => {
    const id = randomUUID();
    await sql.query(
      `INSERT INTO "stock_adjustments" ("id", "workspace_id", "item_id", "delta", "reason", "quantity_after", "created_at") VALUES ($1, $2, $3, $4, 'receipt', 0, $5)`,
      [id, workspace, itemId, delta, when],
    );
    return id;
  };
  const beforeMove = await adjustment(moved, 5, at(0));
  await sql.query(
    `INSERT INTO "movements" ("id", "workspace_id", "item_id", "from_location_id", "to_location_id", "quantity", "reason", "created_at")
     VALUES ($1, $2, $3, $4, $5, 5, 'default_location_changed', $6)`,
    [randomUUID(), workspace, moved, shelf, aisle, at(10)],
  );
  const afterMove = await adjustment(moved, 2, at(20));
  const unplacedAdjustment = await adjustment(unplaced, 3, at(5));
  const placedAdjustment = await adjustment(placed, 12, at(5));

  const result = await database.migrateRest();
  expect(result.applied[0]).toBe(STOCK_LEVELS);

  const levels = await sql.query(`SELECT "item_id", "location_id", "on_hand", "reserved", "workspace_id" FROM "stock_levels" ORDER BY "on_hand"`);
  expect(levels.rows).toEqual([
    { item_id: unplaced, location_id: null, on_hand: 3, reserved: 0, workspace_id: workspace },
    { item_id: moved, location_id: aisle, on_hand: 7, reserved: 0, workspace_id: workspace },
    { item_id: placed, location_id: shelf, on_hand: 12, reserved: 0, workspace_id: workspace },
  ]);
  expect(levels.rows.map((row) => row.item_id)).not.toContain(empty);

  const adjustments = await sql.query(`SELECT "id", "location_id" FROM "stock_adjustments"`);
  expect(Object.fromEntries(adjustments.rows.map((row) => [row.id, row.location_id]))).toEqual({
    [beforeMove]: shelf,
    [afterMove]: aisle,
    [unplacedAdjustment]: null,
    [placedAdjustment]: shelf,
  });

  // The database keeps the invariant from now on: a level never holds more reserved than on hand, nor a second null level.
  await expect(sql.query(`UPDATE "stock_levels" SET "reserved" = "on_hand" + 1 WHERE "item_id" = $1`, [moved])).rejects.toThrow(
    /stock_levels_reserved_within_on_hand/,
  );
  await expect(sql.query(`UPDATE "stock_levels" SET "reserved" = -1, "on_hand" = 0 WHERE "item_id" = $1`, [moved])).rejects.toThrow(
    /stock_levels_reserved_not_negative/,
  );
  await expect(
    sql.query(`INSERT INTO "stock_levels" ("workspace_id", "item_id", "location_id", "on_hand") VALUES ($1, $2, NULL, 1)`, [workspace, unplaced]),
  ).rejects.toThrow(/stock_levels_item_id_location_id_key/);
});
