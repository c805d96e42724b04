-- Scan retention (contract section 20): scans of unknown tickets and of another event's tickets
-- are deleted 7 days after they were recorded; the sweeper walks them oldest first.
CREATE INDEX "scans_unmatched_recorded_at_idx" ON "scans"("recorded_at") WHERE "status" IN ('not_found', 'wrong_event');
