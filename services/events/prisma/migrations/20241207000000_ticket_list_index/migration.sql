-- GET /events/{id}/tickets without a status filter runs in (created_at, id) order within one event:
-- the index with status between event and time cannot give that order, so each page of a
-- 100,000-ticket event sorted what was left of it (the check-in bench's full download).

-- CreateIndex
CREATE INDEX "tickets_event_id_created_at_id_idx" ON "tickets"("event_id", "created_at", "id");
