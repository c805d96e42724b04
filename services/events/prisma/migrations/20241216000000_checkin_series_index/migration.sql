-- GET /events/{id}/stats/series counts an event's check-ins by "at" in a window: one range of this
-- index per answer; without it every answer read all of the event's tickets' check-ins.

-- CreateIndex
CREATE INDEX "checkins_event_id_at_idx" ON "checkins"("event_id", "at");
