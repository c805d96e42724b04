-- @platform/webhooks retention: the pruner deletes delivery records by "created_at" (sql/webhooks.sql has this index too).
-- Deleting published "outbox_events" by "published_at" uses "outbox_events_published_at_created_at_idx".

-- CreateIndex
CREATE INDEX "webhook_deliveries_created_at_idx" ON "webhook_deliveries"("created_at");
