-- What each workspace keeps (EVENTS_WORKSPACE_MAX_EVENTS, EVENTS_WORKSPACE_MAX_TICKETS), counted by
-- every create in its own statement: a conditional upsert of the workspace's row, which adds nothing
-- once the count reaches the limit, and the insert taking its rows from it. The check costs the same
-- for 10 or 10,000 events, and concurrent creates queue on the row instead of passing the limit.
-- The API never deletes events or tickets; whatever deletes one must count it down in the same
-- transaction.

-- CreateTable
CREATE TABLE "workspace_usage" (
    "workspace_id" UUID NOT NULL,
    "events" INTEGER NOT NULL DEFAULT 0,
    "tickets" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "workspace_usage_pkey" PRIMARY KEY ("workspace_id"),
    CONSTRAINT "workspace_usage_events_check" CHECK ("events" >= 0),
    CONSTRAINT "workspace_usage_tickets_check" CHECK ("tickets" >= 0)
);

-- The counts of the rows already there. The share locks hold off creates until this transaction
-- commits, so none commits between the counts and the table's first use.
LOCK TABLE "events", "tickets" IN SHARE MODE;

INSERT INTO "workspace_usage" ("workspace_id", "events", "tickets")
SELECT "workspace_id", sum("events")::int, sum("tickets")::int
FROM (
    SELECT "workspace_id", count(*) AS "events", 0 AS "tickets" FROM "events" GROUP BY "workspace_id"
    UNION ALL
    SELECT "workspace_id", 0, count(*) FROM "tickets" GROUP BY "workspace_id"
) AS "counts"
GROUP BY "workspace_id";
