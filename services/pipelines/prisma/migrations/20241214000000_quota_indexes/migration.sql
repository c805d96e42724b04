-- Quotas (contract section 20): a create counts the workspace's pipelines with a schedule (paused or
-- not) under its quota lock; this index answers that count from the index alone. The count of all
-- its pipelines uses "pipelines_workspace_id_created_at_idx".
CREATE INDEX "pipelines_scheduled_workspace_id_idx" ON "pipelines"("workspace_id") WHERE "schedule" IS NOT NULL;
