-- Quotas per workspace (contract section 20): the values set through the admin API; NULL (or no
-- row) is the platform default of the gateway's configuration (WORKSPACE_QUOTA_*). A gateway reads
-- them with each key it caches (a LEFT JOIN of the key lookup) and signs the limits in force into
-- every proxied request; a change logs every key of the workspace in api_key_changes.
CREATE TABLE "workspace_quotas" (
    "workspace_id" UUID NOT NULL,
    "pipelines" INTEGER,
    "scheduled_pipelines" INTEGER,
    "webhook_endpoints" INTEGER,
    "idempotency_bytes" BIGINT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workspace_quotas_pkey" PRIMARY KEY ("workspace_id"),
    CONSTRAINT "workspace_quotas_pipelines_check" CHECK ("pipelines" >= 0),
    CONSTRAINT "workspace_quotas_scheduled_pipelines_check" CHECK ("scheduled_pipelines" >= 0),
    CONSTRAINT "workspace_quotas_webhook_endpoints_check" CHECK ("webhook_endpoints" >= 0),
    CONSTRAINT "workspace_quotas_idempotency_bytes_check" CHECK ("idempotency_bytes" >= 0)
);

ALTER TABLE "workspace_quotas" ADD CONSTRAINT "workspace_quotas_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
