-- Limits per workspace beyond the contract's quotas: what a workspace keeps of items and locations
-- (never deleted), counted as they are created, so checking the limit costs one row whatever the
-- workspace holds; and an index that counts a workspace's active reservations.

-- CreateTable: one row per workspace that has created an item or a location. Each create adds to
-- its column in its own transaction with one conditional upsert (`... WHERE items + 1 <= limit`).
CREATE TABLE "workspace_usage" (
    "workspace_id" UUID NOT NULL,
    "items" INTEGER NOT NULL DEFAULT 0,
    "locations" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "workspace_usage_pkey" PRIMARY KEY ("workspace_id"),
    CONSTRAINT "workspace_usage_items_not_negative" CHECK ("items" >= 0),
    CONSTRAINT "workspace_usage_locations_not_negative" CHECK ("locations" >= 0)
);

-- Data: what each workspace holds today.
INSERT INTO "workspace_usage" ("workspace_id", "items", "locations")
SELECT "workspace_id", sum("items"), sum("locations") FROM (
    SELECT "workspace_id", count(*) AS "items", 0 AS "locations" FROM "items" GROUP BY "workspace_id"
    UNION ALL
    SELECT "workspace_id", 0, count(*) FROM "locations" GROUP BY "workspace_id"
) c GROUP BY "workspace_id";

-- CreateIndex: a workspace's reservations active and not yet due, counted (up to the limit) from the index alone.
CREATE INDEX "reservations_active_workspace_id_expires_at_idx" ON "reservations"("workspace_id", "expires_at") WHERE "status" = 'active';
