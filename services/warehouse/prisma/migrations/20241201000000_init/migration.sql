-- CreateEnum
CREATE TYPE "adjustment_reason" AS ENUM ('receipt', 'sale', 'return', 'damage', 'correction');

-- CreateTable
CREATE TABLE "locations" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "code" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "locations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "items" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "sku" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "category" TEXT,
    "min_stock" INTEGER,
    "location_id" UUID,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "quantity" INTEGER NOT NULL DEFAULT 0,
    "version" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "items_pkey" PRIMARY KEY ("id"),
    -- Stock never goes below zero, whatever the code above does (contract section 9).
    CONSTRAINT "items_quantity_not_negative" CHECK ("quantity" >= 0)
);

-- CreateTable
CREATE TABLE "movements" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "item_id" UUID NOT NULL,
    "from_location_id" UUID,
    "to_location_id" UUID,
    "quantity" INTEGER NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "movements_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "stock_adjustments" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "item_id" UUID NOT NULL,
    "delta" INTEGER NOT NULL,
    "reason" "adjustment_reason" NOT NULL,
    "note" TEXT,
    "quantity_after" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stock_adjustments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox_events" (
    "id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "locations_workspace_id_code_key" ON "locations"("workspace_id", "code");

-- CreateIndex
CREATE INDEX "locations_workspace_id_created_at_idx" ON "locations"("workspace_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "items_workspace_id_sku_key" ON "items"("workspace_id", "sku");

-- CreateIndex
CREATE INDEX "items_workspace_id_created_at_idx" ON "items"("workspace_id", "created_at");

-- CreateIndex
CREATE INDEX "items_workspace_id_category_created_at_idx" ON "items"("workspace_id", "category", "created_at");

-- CreateIndex
CREATE INDEX "movements_workspace_id_item_id_created_at_idx" ON "movements"("workspace_id", "item_id", "created_at");

-- CreateIndex
CREATE INDEX "stock_adjustments_workspace_id_item_id_created_at_idx" ON "stock_adjustments"("workspace_id", "item_id", "created_at");

-- CreateIndex
CREATE INDEX "outbox_events_published_at_created_at_idx" ON "outbox_events"("published_at", "created_at");

-- AddForeignKey
ALTER TABLE "items" ADD CONSTRAINT "items_location_id_fkey" FOREIGN KEY ("location_id") REFERENCES "locations"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "movements" ADD CONSTRAINT "movements_item_id_fkey" FOREIGN KEY ("item_id") REFERENCES "items"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stock_adjustments" ADD CONSTRAINT "stock_adjustments_item_id_fkey" FOREIGN KEY ("item_id") REFERENCES "items"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
