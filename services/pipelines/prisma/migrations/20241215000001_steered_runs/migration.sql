-- Runs that operators steer (contract section 19): retries, the concurrency policy, run timeouts.
CREATE TYPE "concurrency_policy" AS ENUM ('reject', 'enqueue');

ALTER TABLE "pipelines"
  ADD COLUMN "concurrency_policy" "concurrency_policy" NOT NULL DEFAULT 'reject',
  ADD COLUMN "run_timeout_seconds" INTEGER,
  ADD CONSTRAINT "pipelines_run_timeout_seconds_check" CHECK ("run_timeout_seconds" BETWEEN 10 AND 86400);

-- The run a retry retries. No foreign key: the retried run may be deleted by the retention
-- (section 20) while its retry is kept, and the retry still names it.
ALTER TABLE "runs" ADD COLUMN "retry_of" UUID;

-- A pipeline's pending runs in trigger order: the promotion takes the first, the cap counts them.
CREATE INDEX "runs_pending_idx" ON "runs"("pipeline_id", "created_at", "id") WHERE "status" = 'pending';

-- Running runs by start: the timeout sweeper reads only these.
CREATE INDEX "runs_running_started_at_idx" ON "runs"("started_at") WHERE "status" = 'running';
