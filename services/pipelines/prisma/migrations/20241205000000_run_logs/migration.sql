-- Run logs (contract section 14): lines written in the same transactions as the run's state changes.

-- CreateEnum
CREATE TYPE "run_log_level" AS ENUM ('info', 'warn', 'error');

-- Line ids are time-ordered and follow write order: the line's `at` in milliseconds (UUIDv7
-- layout: 48-bit time, version 7, variant 10), then a number from one sequence of the database.
-- Lines of one transaction share `at`; the list order (at, id), which core's cursor pages by,
-- is then the order they were written in, whichever process (API or worker) wrote them.
CREATE SEQUENCE "run_logs_id_seq" AS bigint;

CREATE FUNCTION "run_log_id"("at" timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT (lpad(to_hex(floor(extract(epoch FROM "at") * 1000)::bigint), 12, '0')
          || '7000' || '8' || lpad(to_hex(nextval('run_logs_id_seq')), 15, '0'))::uuid
$$;

-- CreateTable
CREATE TABLE "run_logs" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "run_id" UUID NOT NULL,
    "attempt" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "level" "run_log_level" NOT NULL,
    "message" TEXT NOT NULL,
    "data" JSONB,

    CONSTRAINT "run_logs_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "run_logs_attempt_check" CHECK ("attempt" >= 0),
    CONSTRAINT "run_logs_data_check" CHECK ("data" IS NULL OR jsonb_typeof("data") = 'object')
);

-- CreateIndex
CREATE INDEX "run_logs_run_id_at_id_idx" ON "run_logs"("run_id", "at", "id");

-- AddForeignKey
ALTER TABLE "run_logs" ADD CONSTRAINT "run_logs_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
