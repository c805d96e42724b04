-- Stock per location, transfers and reservations (contract section 18).

-- CreateEnum
CREATE TYPE "reservation_status" AS ENUM ('active', 'committed', 'released', 'expired');

-- CreateTable: one level per (item, location); "location_id" null is the unassigned level.
CREATE TABLE "stock_levels" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "workspace_id" UUID NOT NULL,
    "item_id" UUID NOT NULL,
    "location_id" UUID,
    "on_hand" INTEGER NOT NULL DEFAULT 0,
    "reserved" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stock_levels_pkey" PRIMARY KEY ("id"),
    -- on_hand >= reserved >= 0 at every level, whatever the code above does (contract section 18).
    CONSTRAINT "stock_levels_reserved_not_negative" CHECK ("reserved" >= 0),
    CONSTRAINT "stock_levels_reserved_within_on_hand" CHECK ("on_hand" >= "reserved")
);

-- CreateTable
CREATE TABLE "reservations" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "workspace_id" UUID NOT NULL,
    "item_id" UUID NOT NULL,
    "location_id" UUID,
    "quantity" INTEGER NOT NULL,
    "status" "reservation_status" NOT NULL DEFAULT 'active',
    "reference" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "reservations_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "reservations_quantity_positive" CHECK ("quantity" > 0)
);

-- AlterTable: a transfer is a movement with its note.
ALTER TABLE "movements" ADD COLUMN "note" TEXT;

-- AlterTable: the level an adjustment applied to.
ALTER TABLE "stock_adjustments" ADD COLUMN "location_id" UUID;

-- CreateIndex: one level per item and location, the unassigned (null) level included.
CREATE UNIQUE INDEX "stock_levels_item_id_location_id_key" ON "stock_levels"("item_id", "location_id") NULLS NOT DISTINCT;

-- CreateIndex: GET /locations/{id}/stock.
CREATE INDEX "stock_levels_workspace_id_location_id_idx" ON "stock_levels"("workspace_id", "location_id");

-- CreateIndex: GET /items/{id}/reservations, oldest first.
CREATE INDEX "reservations_workspace_id_item_id_created_at_id_idx" ON "reservations"("workspace_id", "item_id", "created_at", "id");

-- CreateIndex: an item's active reservations past their expiry (released by every write on the item, excluded by every read).
CREATE INDEX "reservations_active_item_id_expires_at_idx" ON "reservations"("item_id", "expires_at") WHERE "status" = 'active';

-- CreateIndex: the expiry sweeper's due reservations over all workspaces.
CREATE INDEX "reservations_active_expires_at_idx" ON "reservations"("expires_at") WHERE "status" = 'active';

-- CreateIndex: the retention sweeper deletes ended reservations by "updated_at".
CREATE INDEX "reservations_ended_updated_at_idx" ON "reservations"("updated_at") WHERE "status" <> 'active';

-- AddForeignKey
ALTER TABLE "stock_levels" ADD CONSTRAINT "stock_levels_item_id_fkey" FOREIGN KEY ("item_id") REFERENCES "items"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "stock_levels" ADD CONSTRAINT "stock_levels_location_id_fkey" FOREIGN KEY ("location_id") REFERENCES "locations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_item_id_fkey" FOREIGN KEY ("item_id") REFERENCES "items"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Data: today's quantities become levels, at the item's default location where it has one, else
-- at the unassigned level, so "items"."quantity" stays the sum of its levels.
INSERT INTO "stock_levels" ("workspace_id", "item_id", "location_id", "on_hand")
SELECT "workspace_id", "id", "location_id", "quantity" FROM "items" WHERE "quantity" > 0;

-- Data: before levels, an adjustment applied to all of an item's stock, which sat at the item's
-- default location of that moment: the "to" of the last location change before it, else the
-- "from" of the first one after it, else the item's location today.
UPDATE "stock_adjustments" a SET "location_id" = (
    SELECT CASE WHEN prev."id" IS NOT NULL THEN prev."to_location_id"
                WHEN next."id" IS NOT NULL THEN next."from_location_id"
                ELSE i."location_id" END
      FROM "items" i
      LEFT JOIN LATERAL (
          SELECT m."id", m."to_location_id" FROM "movements" m
           WHERE m."workspace_id" = i."workspace_id" AND m."item_id" = i."id" AND m."created_at" <= a."created_at"
           ORDER BY m."created_at" DESC, m."id" DESC LIMIT 1) prev ON true
      LEFT JOIN LATERAL (
          SELECT m."id", m."from_location_id" FROM "movements" m
           WHERE m."workspace_id" = i."workspace_id" AND m."item_id" = i."id" AND m."created_at" > a."created_at"
           ORDER BY m."created_at", m."id" LIMIT 1) next ON true
     WHERE i."id" = a."item_id");
