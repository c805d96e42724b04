-- Fair run scheduling (contract section 20). A queued run gets its job only once admitted
-- (runs.store.ts `admit`): at most PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS runs of a workspace are
-- running or admitted at once. Internal: the API never shows admitted_at.
ALTER TABLE "runs" ADD COLUMN "admitted_at" TIMESTAMPTZ(3);

-- Runs queued before this migration already have their job: they count as admitted.
UPDATE "runs" SET "admitted_at" = "created_at" WHERE "status" = 'queued';

-- A workspace's runs waiting for admission, oldest first (the admission), and the workspaces that
-- have some (the requeue's loose index scan).
CREATE INDEX "runs_awaiting_admission_idx" ON "runs"("workspace_id", "created_at", "id")
  WHERE "status" = 'queued' AND "admitted_at" IS NULL;

-- The runs holding a workspace's slots (running, or admitted and waiting for a worker): counted at
-- every admission, so the count reads at most the cap's worth of rows however long the backlog.
CREATE INDEX "runs_holding_slot_idx" ON "runs"("workspace_id")
  WHERE "status" = 'running' OR ("status" = 'queued' AND "admitted_at" IS NOT NULL);

-- Admitted runs not yet started, by admission time: the requeue gives a lost job back.
CREATE INDEX "runs_admitted_queued_idx" ON "runs"("admitted_at")
  WHERE "status" = 'queued' AND "admitted_at" IS NOT NULL;
