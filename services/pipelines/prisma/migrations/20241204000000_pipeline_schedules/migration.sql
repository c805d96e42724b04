-- Pipeline schedules (contract section 13).
-- "schedule": the schedule as sent (validated by the API), NULL = runs only when triggered.
-- "schedule_anchor_at": when the schedule was set or the pipeline last resumed; interval ticks are anchor + k * every_seconds.
-- "next_run_at": the next tick; NULL without a schedule or while paused.
ALTER TABLE "pipelines" ADD COLUMN "schedule" JSONB;
ALTER TABLE "pipelines" ADD COLUMN "schedule_anchor_at" TIMESTAMPTZ(3);
ALTER TABLE "pipelines" ADD COLUMN "next_run_at" TIMESTAMPTZ(3);

-- The scheduler's query: due active pipelines, earliest first (FOR UPDATE SKIP LOCKED).
CREATE INDEX "pipelines_due_next_run_at_idx" ON "pipelines"("next_run_at") WHERE "status" = 'active' AND "next_run_at" IS NOT NULL;

-- "scheduled_for": the tick that created the run; NULL on every run a tick did not create.
ALTER TABLE "runs" ADD COLUMN "scheduled_for" TIMESTAMPTZ(3);

-- One run per tick, whatever the number of schedulers: the database refuses a second one (NULLs never conflict).
CREATE UNIQUE INDEX "runs_pipeline_id_scheduled_for_key" ON "runs"("pipeline_id", "scheduled_for");
