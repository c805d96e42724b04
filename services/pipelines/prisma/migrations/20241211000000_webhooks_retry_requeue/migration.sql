-- @platform/webhooks requeue of lost retries: a delivery's records looked up by (event, endpoint), to
-- know whether a failed attempt is the pair's latest (sql/webhooks.sql has this index too).

-- CreateIndex
CREATE INDEX "webhook_deliveries_event_id_endpoint_id_created_at_idx" ON "webhook_deliveries"("event_id", "endpoint_id", "created_at");
