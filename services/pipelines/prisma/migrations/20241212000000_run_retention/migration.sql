-- Run retention (contract section 20): the sweeper walks ended runs oldest-ended first.
-- CreateIndex
CREATE INDEX "runs_finished_at_idx" ON "runs"("finished_at");
