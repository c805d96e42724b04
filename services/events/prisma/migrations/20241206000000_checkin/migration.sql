-- Check-in at a gate (contract section 15): ticket changes for delta download, offline scans
-- recorded once per (event, scan_id), every check-in attempt, and per-gate counters for live figures.

-- A ticket's last validation or reversal (its creation until then). Set from the database's clock,
-- so every service instance writes the same time line that `updated_since` compares against.
ALTER TABLE "tickets" ADD COLUMN "updated_at" TIMESTAMPTZ(3);
UPDATE "tickets" SET "updated_at" = GREATEST("created_at", COALESCE("validated_at", "created_at"));
ALTER TABLE "tickets" ALTER COLUMN "updated_at" SET NOT NULL, ALTER COLUMN "updated_at" SET DEFAULT CURRENT_TIMESTAMP;
ALTER TABLE "tickets" ALTER COLUMN "created_at" SET DEFAULT CURRENT_TIMESTAMP;

-- Delta download: GET /events/{id}/tickets?updated_since= in (updated_at, id) order.
CREATE INDEX "tickets_event_id_updated_at_id_idx" ON "tickets"("event_id", "updated_at", "id");

-- The event's ticket count, kept with every issue, so live figures never count the tickets.
ALTER TABLE "events" ADD COLUMN "tickets_total" INTEGER NOT NULL DEFAULT 0;
UPDATE "events" e SET "tickets_total" = (SELECT count(*) FROM "tickets" t WHERE t."event_id" = e."id");
ALTER TABLE "events" ADD CONSTRAINT "events_tickets_total_check" CHECK ("tickets_total" >= 0);

-- CreateEnum
CREATE TYPE "checkin_action" AS ENUM ('validated', 'unvalidated', 'rejected_duplicate');

-- Check-in ids are ordered like run log ids: the check-in's `at` in milliseconds (UUIDv7 layout),
-- then a number from one sequence, so check-ins of one instant list in the order they were recorded.
CREATE SEQUENCE "checkins_id_seq" AS bigint;

CREATE FUNCTION "checkin_id"("at" timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT (lpad(to_hex(floor(extract(epoch FROM "at") * 1000)::bigint), 12, '0')
          || '7000' || '8' || lpad(to_hex(nextval('checkins_id_seq')), 15, '0'))::uuid
$$;

-- CreateTable
CREATE TABLE "checkins" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "event_id" UUID NOT NULL,
    "ticket_id" UUID NOT NULL,
    "action" "checkin_action" NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "gate" TEXT,
    "validator_id" UUID,
    "scan_id" TEXT,
    "reason" TEXT,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkins_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "checkins_reason_check" CHECK (("action" = 'unvalidated') = ("reason" IS NOT NULL))
);

-- CreateIndex
CREATE INDEX "checkins_ticket_id_at_id_idx" ON "checkins"("ticket_id", "at", "id");

-- AddForeignKey
ALTER TABLE "checkins" ADD CONSTRAINT "checkins_ticket_id_fkey" FOREIGN KEY ("ticket_id") REFERENCES "tickets"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- CreateEnum
CREATE TYPE "scan_status" AS ENUM ('validated', 'already_validated', 'not_found', 'wrong_event');

-- An offline scan's result, recorded by the first upload that carries its scan_id: the primary key
-- is the exactly-once rule for scans (a retried upload finds the row and answers what it holds).
-- `status` is null only inside the transaction that claims the scan_id, which sets it before commit.
-- CreateTable
CREATE TABLE "scans" (
    "event_id" UUID NOT NULL,
    "scan_id" TEXT NOT NULL,
    "workspace_id" UUID NOT NULL,
    "ticket_id" UUID NOT NULL,
    "status" "scan_status",
    "validated_at" TIMESTAMPTZ(3),
    "validator_id" UUID,
    "gate" TEXT,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "scans_pkey" PRIMARY KEY ("event_id", "scan_id")
);

-- AddForeignKey
ALTER TABLE "scans" ADD CONSTRAINT "scans_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Live figures per gate, changed in the transaction of each validation, reversal and refused
-- duplicate. `gate` '' stands for no gate (a gate is a non-empty slug): the key needs a value.
-- GET /events/{id}/stats reads these rows.
-- CreateTable
CREATE TABLE "event_gate_counts" (
    "event_id" UUID NOT NULL,
    "gate" TEXT NOT NULL,
    "validated" INTEGER NOT NULL DEFAULT 0,
    "rejected_duplicates" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "event_gate_counts_pkey" PRIMARY KEY ("event_id", "gate"),
    CONSTRAINT "event_gate_counts_validated_check" CHECK ("validated" >= 0),
    CONSTRAINT "event_gate_counts_rejected_duplicates_check" CHECK ("rejected_duplicates" >= 0)
);

-- AddForeignKey
ALTER TABLE "event_gate_counts" ADD CONSTRAINT "event_gate_counts_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

INSERT INTO "event_gate_counts" ("event_id", "gate", "validated")
SELECT "event_id", COALESCE("gate", ''), count(*) FROM "tickets" WHERE "status" = 'validated' GROUP BY "event_id", COALESCE("gate", '');
