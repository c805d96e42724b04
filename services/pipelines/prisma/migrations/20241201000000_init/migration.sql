-- CreateEnum
CREATE TYPE "pipeline_status" AS ENUM ('active', 'paused');

-- CreateEnum
CREATE TYPE "run_status" AS ENUM ('queued', 'running', 'succeeded', 'failed', 'cancelled');

-- CreateEnum
CREATE TYPE "run_trigger" AS ENUM ('manual', 'schedule', 'webhook', 'backfill');

-- CreateTable
CREATE TABLE "pipelines" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "status" "pipeline_status" NOT NULL DEFAULT 'active',
    "source_connector" TEXT NOT NULL,
    "source_config" JSONB NOT NULL,
    "destination_connector" TEXT NOT NULL,
    "destination_config" JSONB NOT NULL,
    "last_successful_run_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pipelines_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "runs" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "pipeline_id" UUID NOT NULL,
    "status" "run_status" NOT NULL DEFAULT 'queued',
    "trigger" "run_trigger" NOT NULL,
    "since" TIMESTAMPTZ(3),
    "dry_run" BOOLEAN NOT NULL DEFAULT false,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "records_read" INTEGER NOT NULL DEFAULT 0,
    "records_written" INTEGER NOT NULL DEFAULT 0,
    "error_code" TEXT,
    "error_message" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "runs_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "runs_attempts_check" CHECK ("attempts" >= 0),
    CONSTRAINT "runs_stats_check" CHECK ("records_read" >= 0 AND "records_written" >= 0)
);

-- CreateIndex
CREATE INDEX "pipelines_workspace_id_created_at_idx" ON "pipelines"("workspace_id", "created_at");

-- CreateIndex
CREATE INDEX "runs_workspace_id_pipeline_id_created_at_idx" ON "runs"("workspace_id", "pipeline_id", "created_at");

-- One active run per pipeline (contract section 10): of concurrent triggers exactly one insert
-- succeeds; the others fail with a unique violation and answer 409.
CREATE UNIQUE INDEX "runs_one_active_per_pipeline" ON "runs"("pipeline_id") WHERE "status" IN ('queued', 'running');

-- AddForeignKey
ALTER TABLE "runs" ADD CONSTRAINT "runs_pipeline_id_fkey" FOREIGN KEY ("pipeline_id") REFERENCES "pipelines"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- CreateTable
CREATE TABLE "outbox_events" (
    "id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "outbox_events_published_at_created_at_idx" ON "outbox_events"("published_at", "created_at");
