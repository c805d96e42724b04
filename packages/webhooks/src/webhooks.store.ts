import { lockWorkspaceQuota, quotaReached, workspaceScoped, type Cursor, type QuotaReached, type SeriesWindow, type WorkspaceId } from '@platform/core';
import type { Sql, SqlClient } from './sql';

/** A row of `webhook_endpoints`. */
export interface EndpointRow {
  id: string;
  workspaceId: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A row of `webhook_deliveries`: one delivery attempt. */
export interface DeliveryRow {
  id: string;
  workspaceId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  status: 'succeeded' | 'failed';
  responseStatus: number | null;
  error: string | null;
  createdAt: Date;
}

/** One bucket of an endpoint's delivery attempts by outcome. */
export interface DeliveryBucketRow {
  start: Date;
  succeeded: number;
  failed: number;
}

/** A row of `outbox_events` (core outbox.ts). */
export interface OutboxRow {
  id: string;
  workspaceId: string;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
  /** The change's W3C traceparent; null when tracing was off. */
  traceparent: string | null;
}

const ENDPOINT = `"id", "workspace_id" AS "workspaceId", "url", "events", "enabled", "secret", "previous_secret" AS "previousSecret",
  "previous_secret_expires_at" AS "previousSecretExpiresAt", "disabled_at" AS "disabledAt", "disabled_reason" AS "disabledReason",
  "created_at" AS "createdAt", "updated_at" AS "updatedAt"`;

const DELIVERY = `"id", "workspace_id" AS "workspaceId", "endpoint_id" AS "endpointId", "event_id" AS "eventId", "event_type" AS "eventType",
  "attempt", "status", "response_status" AS "responseStatus", "error", "created_at" AS "createdAt"`;

/** Keyset condition after a cursor, in ("created_at", "id") order; `$n` is the next free placeholder. */
function after(cursor: Cursor | undefined, n: number): { where: string; values: unknown[] } {
  if (!cursor) return { where: '', values: [] };
  return { where: ` AND ("created_at", "id") > ($${n}::timestamptz, $${n + 1}::uuid)`, values: [cursor.createdAt, cursor.id] };
}

export type InsertEndpointResult = { kind: 'created'; endpoint: EndpointRow } | QuotaReached;

/** The workspace's endpoints in this service's database (the ("workspace_id", "created_at", "id") index). */
async function countEndpoints(sql: SqlClient, workspaceId: WorkspaceId): Promise<number> {
  const rows = await sql.$queryRawUnsafe<{ count: number }[]>(
    `SELECT count(*)::int AS "count" FROM "webhook_endpoints" WHERE "workspace_id" = $1::uuid`,
    workspaceId,
  );
  return rows[0]!.count;
}

/** Every webhook query; each takes the workspace, so none can reach another workspace's rows. */
export function webhooksStore(sql: Sql) {
  return workspaceScoped({
    /**
     * Inserts the endpoint unless the workspace already holds `limit` endpoints in this service
     * (contract section 20): counted and inserted under the workspace's quota lock, so concurrent
     * creates never pass it.
     */
    async insertEndpoint(
      workspaceId: WorkspaceId,
      data: { url: string; events: string[]; enabled: boolean; secret: string },
      limit: number,
    ): Promise<InsertEndpointResult> {
      return sql.$transaction(async (tx) => {
        await lockWorkspaceQuota(tx, 'webhook_endpoints', workspaceId);
        const refused = quotaReached('webhook_endpoints', await countEndpoints(tx, workspaceId), limit);
        if (refused) return refused;
        const rows = await tx.$queryRawUnsafe<EndpointRow[]>(
          `INSERT INTO "webhook_endpoints" ("workspace_id", "url", "events", "enabled", "secret", "disabled_at", "disabled_reason")
         VALUES ($1::uuid, $2::text, $3::text[], $4::boolean, $5::text,
                 CASE WHEN $4::boolean THEN NULL ELSE CURRENT_TIMESTAMP END, CASE WHEN $4::boolean THEN NULL ELSE 'disabled via API' END)
         RETURNING ${ENDPOINT}`,
          workspaceId,
          data.url,
          data.events,
          data.enabled,
          data.secret,
        );
        return { kind: 'created', endpoint: rows[0]! };
      });
    },

    /** What the workspace holds of the webhook endpoints quota in this service. */
    async usage(workspaceId: WorkspaceId): Promise<{ webhook_endpoints: number }> {
      return { webhook_endpoints: await countEndpoints(sql, workspaceId) };
    },

    async findEndpoint(workspaceId: WorkspaceId, id: string): Promise<EndpointRow | null> {
      const rows = await sql.$queryRawUnsafe<EndpointRow[]>(
        `SELECT ${ENDPOINT} FROM "webhook_endpoints" WHERE "id" = $1::uuid AND "workspace_id" = $2::uuid`,
        id,
        workspaceId,
      );
      return rows[0] ?? null;
    },

    listEndpoints(workspaceId: WorkspaceId, page: { after?: Cursor; take: number }): Promise<EndpointRow[]> {
      const keyset = after(page.after, 3);
      return Promise.resolve(
        sql.$queryRawUnsafe<EndpointRow[]>(
          `SELECT ${ENDPOINT} FROM "webhook_endpoints" WHERE "workspace_id" = $1::uuid${keyset.where}
           ORDER BY "created_at", "id" LIMIT $2::int`,
          workspaceId,
          page.take,
          ...keyset.values,
        ),
      );
    },

    /**
     * Changes the given fields in one statement. Enabling clears an automatic disable (410 Gone);
     * disabling records when.
     */
    async updateEndpoint(workspaceId: WorkspaceId, id: string, data: { url?: string; events?: string[]; enabled?: boolean }): Promise<EndpointRow | null> {
      const rows = await sql.$queryRawUnsafe<EndpointRow[]>(
        `UPDATE "webhook_endpoints"
            SET "url" = COALESCE($3::text, "url"),
                "events" = COALESCE($4::text[], "events"),
                "enabled" = COALESCE($5::boolean, "enabled"),
                "disabled_at" = CASE WHEN $5::boolean IS NULL THEN "disabled_at"
                                     WHEN $5::boolean THEN NULL
                                     ELSE COALESCE("disabled_at", CURRENT_TIMESTAMP) END,
                "disabled_reason" = CASE WHEN $5::boolean IS NULL THEN "disabled_reason"
                                         WHEN $5::boolean THEN NULL
                                         ELSE COALESCE("disabled_reason", 'disabled via API') END,
                "updated_at" = CURRENT_TIMESTAMP
          WHERE "id" = $1::uuid AND "workspace_id" = $2::uuid
          RETURNING ${ENDPOINT}`,
        id,
        workspaceId,
        data.url ?? null,
        data.events ?? null,
        data.enabled ?? null,
      );
      return rows[0] ?? null;
    },

    async deleteEndpoint(workspaceId: WorkspaceId, id: string): Promise<boolean> {
      const count = await sql.$executeRawUnsafe(`DELETE FROM "webhook_endpoints" WHERE "id" = $1::uuid AND "workspace_id" = $2::uuid`, id, workspaceId);
      return count > 0;
    },

    /** The current secret becomes the previous one, valid until `previousValidUntil` (one statement: no lost rotation). */
    async rotateSecret(workspaceId: WorkspaceId, id: string, secret: string, previousValidUntil: Date): Promise<EndpointRow | null> {
      const rows = await sql.$queryRawUnsafe<EndpointRow[]>(
        `UPDATE "webhook_endpoints"
            SET "previous_secret" = "secret", "previous_secret_expires_at" = $4::timestamptz, "secret" = $3::text, "updated_at" = CURRENT_TIMESTAMP
          WHERE "id" = $1::uuid AND "workspace_id" = $2::uuid
          RETURNING ${ENDPOINT}`,
        id,
        workspaceId,
        secret,
        previousValidUntil,
      );
      return rows[0] ?? null;
    },

    /** Disables an endpoint that is still enabled; false when it was already disabled or is gone. */
    async disableEndpoint(workspaceId: WorkspaceId, id: string, reason: string): Promise<boolean> {
      const count = await sql.$executeRawUnsafe(
        `UPDATE "webhook_endpoints" SET "enabled" = false, "disabled_at" = CURRENT_TIMESTAMP, "disabled_reason" = $3::text, "updated_at" = CURRENT_TIMESTAMP
          WHERE "id" = $1::uuid AND "workspace_id" = $2::uuid AND "enabled"`,
        id,
        workspaceId,
        reason,
      );
      return count > 0;
    },

    listDeliveries(workspaceId: WorkspaceId, endpointId: string, page: { after?: Cursor; take: number }): Promise<DeliveryRow[]> {
      const keyset = after(page.after, 4);
      return Promise.resolve(
        sql.$queryRawUnsafe<DeliveryRow[]>(
          `SELECT ${DELIVERY} FROM "webhook_deliveries" WHERE "endpoint_id" = $1::uuid AND "workspace_id" = $2::uuid${keyset.where}
           ORDER BY "created_at", "id" LIMIT $3::int`,
          endpointId,
          workspaceId,
          page.take,
          ...keyset.values,
        ),
      );
    },

    async findDelivery(workspaceId: WorkspaceId, endpointId: string, id: string): Promise<DeliveryRow | null> {
      const rows = await sql.$queryRawUnsafe<DeliveryRow[]>(
        `SELECT ${DELIVERY} FROM "webhook_deliveries" WHERE "id" = $1::uuid AND "endpoint_id" = $2::uuid AND "workspace_id" = $3::uuid`,
        id,
        endpointId,
        workspaceId,
      );
      return rows[0] ?? null;
    },

    /** The highest attempt number recorded for the event at the endpoint (0 when none), by the (event, endpoint, created_at) index. */
    async latestAttempt(workspaceId: WorkspaceId, endpointId: string, eventId: string): Promise<number> {
      const rows = await sql.$queryRawUnsafe<{ attempt: number | null }[]>(
        `SELECT max("attempt")::int AS "attempt" FROM "webhook_deliveries" WHERE "event_id" = $1::text AND "endpoint_id" = $2::uuid AND "workspace_id" = $3::uuid`,
        eventId,
        endpointId,
        workspaceId,
      );
      return rows[0]?.attempt ?? 0;
    },

    /** The event as the outbox kept it; null once retention pruned it (WEBHOOKS_OUTBOX_RETENTION_DAYS). */
    async findOutboxEvent(workspaceId: WorkspaceId, eventId: string): Promise<OutboxRow | null> {
      const rows = await sql.$queryRawUnsafe<OutboxRow[]>(
        `SELECT "id", "workspace_id" AS "workspaceId", "type", "data", "created_at" AS "createdAt", "traceparent"
           FROM "outbox_events" WHERE "id" = $1::text AND "workspace_id" = $2::uuid`,
        eventId,
        workspaceId,
      );
      return rows[0] ?? null;
    },

    /**
     * The endpoint's delivery attempts per bucket of the window by outcome, every bucket present
     * (zeros included), oldest first. Reads one range of the ("endpoint_id", "created_at", "id") index.
     */
    deliverySeries(workspaceId: WorkspaceId, endpointId: string, window: SeriesWindow): Promise<DeliveryBucketRow[]> {
      return Promise.resolve(
        sql.$queryRawUnsafe<DeliveryBucketRow[]>(
          `WITH "counts" AS (
             SELECT date_trunc($5::text, "created_at", 'UTC') AS "start",
                    count(*) FILTER (WHERE "status" = 'succeeded')::int AS "succeeded",
                    count(*) FILTER (WHERE "status" = 'failed')::int AS "failed"
               FROM "webhook_deliveries"
              WHERE "endpoint_id" = $1::uuid AND "workspace_id" = $2::uuid AND "created_at" >= $3::timestamptz AND "created_at" < $4::timestamptz
              GROUP BY 1
           )
           SELECT b."start", COALESCE(c."succeeded", 0) AS "succeeded", COALESCE(c."failed", 0) AS "failed"
             FROM generate_series($3::timestamptz, $4::timestamptz - $6::interval, $6::interval) AS b("start")
             LEFT JOIN "counts" c ON c."start" = b."start"
            ORDER BY b."start"`,
          endpointId,
          workspaceId,
          window.from,
          window.to,
          window.interval,
          window.step,
        ),
      );
    },

    async insertDelivery(workspaceId: WorkspaceId, data: Omit<DeliveryRow, 'id' | 'workspaceId' | 'createdAt'>): Promise<DeliveryRow> {
      const rows = await sql.$queryRawUnsafe<DeliveryRow[]>(
        `INSERT INTO "webhook_deliveries" ("workspace_id", "endpoint_id", "event_id", "event_type", "attempt", "status", "response_status", "error")
         VALUES ($1::uuid, $2::uuid, $3::text, $4::text, $5::int, $6::text, $7::int, $8::text)
         RETURNING ${DELIVERY}`,
        workspaceId,
        data.endpointId,
        data.eventId,
        data.eventType,
        data.attempt,
        data.status,
        data.responseStatus,
        data.error,
      );
      return rows[0]!;
    },
  });
}
export type WebhooksStore = ReturnType<typeof webhooksStore>;

/**
 * Relay queries, across workspaces: the relay publishes every service row. Claimed rows stay
 * locked until the caller's transaction ends; SKIP LOCKED lets other relays take the next ones.
 */
export function outboxStore(tx: SqlClient) {
  return {
    claimUnpublished(limit: number): Promise<OutboxRow[]> {
      return Promise.resolve(
        tx.$queryRawUnsafe<OutboxRow[]>(
          `SELECT "id", "workspace_id" AS "workspaceId", "type", "data", "created_at" AS "createdAt", "traceparent"
             FROM "outbox_events" WHERE "published_at" IS NULL
            ORDER BY "created_at", "id" LIMIT $1::int
            FOR UPDATE SKIP LOCKED`,
          limit,
        ),
      );
    },

    /** Enabled endpoints of these workspaces with their subscriptions. */
    enabledEndpoints(workspaceIds: string[]): Promise<{ id: string; workspaceId: string; events: string[] }[]> {
      return Promise.resolve(
        tx.$queryRawUnsafe<{ id: string; workspaceId: string; events: string[] }[]>(
          `SELECT "id", "workspace_id" AS "workspaceId", "events" FROM "webhook_endpoints"
            WHERE "enabled" AND "workspace_id" = ANY($1::uuid[])`,
          workspaceIds,
        ),
      );
    },

    markPublished(ids: string[]): Promise<number> {
      return Promise.resolve(tx.$executeRawUnsafe(`UPDATE "outbox_events" SET "published_at" = CURRENT_TIMESTAMP WHERE "id" = ANY($1::text[])`, ids));
    },
  };
}

/**
 * Deletes at most `limit` of the oldest rows of `table` whose `column` is before `before`, in one
 * short statement, and returns how many. SKIP LOCKED lets several pruners run at once, each taking
 * other rows, and never waits on a row another transaction holds. A NULL `column` is never before.
 */
async function deleteOlderThan(
  sql: SqlClient,
  table: 'outbox_events' | 'webhook_deliveries',
  column: 'published_at' | 'created_at',
  before: Date,
  limit: number,
): Promise<number> {
  // "= ANY(ARRAY(...))", not "IN (...)": the ids are looked up in the primary key; with IN the
  // planner may hash-join them against a scan of the whole table, on every batch.
  return sql.$executeRawUnsafe(
    `DELETE FROM "${table}" WHERE "id" = ANY(ARRAY(
       SELECT "id" FROM "${table}" WHERE "${column}" < $1::timestamptz
        ORDER BY "${column}" LIMIT $2::int
        FOR UPDATE SKIP LOCKED))`,
    before,
    limit,
  );
}

/** Retention deletes, across workspaces: each deletes one batch of rows past their retention and returns how many. */
export function retentionStore(sql: SqlClient) {
  return {
    /**
     * Outbox rows published before `before`; an unpublished row (NULL `published_at`) is never
     * deleted. The range is the start of the ("published_at", "created_at") index.
     */
    deletePublishedOutboxEvents(before: Date, limit: number): Promise<number> {
      return deleteOlderThan(sql, 'outbox_events', 'published_at', before, limit);
    },

    /** Delivery records created before `before` (the "created_at" index). */
    deleteDeliveries(before: Date, limit: number): Promise<number> {
      return deleteOlderThan(sql, 'webhook_deliveries', 'created_at', before, limit);
    },
  };
}
export type RetentionStore = ReturnType<typeof retentionStore>;

/** A published event and one endpoint it is for that has no delivery record yet. */
export interface UnrecordedDelivery extends OutboxRow {
  endpointId: string;
  publishedAt: Date;
}

/** A published event and one endpoint it is for whose latest delivery record is a failed attempt with retries left. */
export interface DueRetry extends OutboxRow {
  endpointId: string;
  /** The latest record: its attempt number, when it was written, and when the next attempt was due. */
  attempt: number;
  recordedAt: Date;
  dueAt: Date;
}

/**
 * Delivery records are looked for from this long before the window's first publication: a row
 * republished after a relay crashed before its commit has its records from the first publication.
 */
const REPUBLISHED_MARGIN_MS = 300_000;

/**
 * The requeue's queries, across workspaces (deliveries.requeue.ts). Statements see what committed
 * before each of them (READ COMMITTED), so a later one sees a record an earlier one could not.
 */
export function requeueStore(tx: SqlClient) {
  return {
    /**
     * Takes the transaction-scoped advisory lock named `key`, or answers false at once when another
     * transaction holds it: one requeue pass at a time per queue (xact locks work through PgBouncer).
     */
    async tryLock(key: string): Promise<boolean> {
      const rows = await tx.$queryRawUnsafe<{ locked: boolean }[]>(`SELECT pg_try_advisory_xact_lock(hashtextextended($1::text, 0)) AS "locked"`, key);
      return rows[0]?.locked === true;
    },

    /** The database's clock `ms` ago: where a requeue window ends. */
    async msAgo(ms: number): Promise<Date> {
      const rows = await tx.$queryRawUnsafe<{ at: Date }[]>(`SELECT CURRENT_TIMESTAMP - $1::int * interval '1 millisecond' AS "at"`, ms);
      return rows[0]!.at;
    },

    /**
     * (event, endpoint) pairs published from `from` (never more than `lookbackMs` ago) until before
     * `until`, with no delivery record: for an endpoint of the event's workspace that is enabled,
     * subscribed to its type and unchanged since the publication (so as the relay saw it). At most
     * `limit`, the workspaces taking turns (each one's oldest first, then each one's second...), so
     * one workspace's backlog fills no pass alone. `oldest`: the publication of the oldest such pair,
     * found or not (null when there is none). Reads the window once: events by `published_at`,
     * records by `created_at`.
     */
    async unrecorded(window: {
      from: Date | null;
      until: Date;
      lookbackMs: number;
      limit: number;
    }): Promise<{ deliveries: UnrecordedDelivery[]; oldest: Date | null }> {
      const rows = await tx.$queryRawUnsafe<(UnrecordedDelivery & { oldest: Date })[]>(
        `WITH "bounds" AS MATERIALIZED (
           SELECT GREATEST(CURRENT_TIMESTAMP - $3::int * interval '1 millisecond', COALESCE($1::timestamptz, '-infinity')) AS "from"
         ), "recorded" AS MATERIALIZED (
           SELECT DISTINCT "event_id", "endpoint_id" FROM "webhook_deliveries"
            WHERE "created_at" >= (SELECT "from" FROM "bounds") - $5::int * interval '1 millisecond'
         ), "pairs" AS (
           SELECT e."id", e."workspace_id", e."type", e."data", e."created_at", e."traceparent", e."published_at", ep."id" AS "endpoint_id",
                  row_number() OVER (PARTITION BY e."workspace_id" ORDER BY e."published_at", e."id", ep."id") AS "turn",
                  min(e."published_at") OVER () AS "oldest"
             FROM "outbox_events" e
             JOIN "webhook_endpoints" ep ON ep."workspace_id" = e."workspace_id"
            WHERE e."published_at" >= (SELECT "from" FROM "bounds") AND e."published_at" < $2::timestamptz
              AND ep."enabled" AND ep."updated_at" <= e."published_at"
              AND ('*' = ANY(ep."events") OR e."type" = ANY(ep."events"))
              AND NOT EXISTS (SELECT 1 FROM "recorded" r WHERE r."event_id" = e."id" AND r."endpoint_id" = ep."id")
         )
         SELECT "id", "workspace_id" AS "workspaceId", "type", "data", "created_at" AS "createdAt", "traceparent", "endpoint_id" AS "endpointId",
                "published_at" AS "publishedAt", "oldest"
           FROM "pairs" ORDER BY "turn", "published_at", "id", "endpoint_id" LIMIT $4::int`,
        window.from,
        window.until,
        window.lookbackMs,
        window.limit,
        REPUBLISHED_MARGIN_MS,
      );
      return { deliveries: rows.map(({ oldest: _, ...delivery }) => delivery), oldest: rows[0]?.oldest ?? null };
    },

    /**
     * (event, endpoint) pairs whose latest delivery record is a failed attempt with a step of
     * `schedule` left, whose next attempt came due from `from` (never more than `lookbackMs` ago)
     * until before `until`: for an endpoint that is enabled and subscribed to the event's type, and
     * an event whose outbox row is kept (the job is rebuilt from it). A failed attempt that ended its
     * job is not one: 410 Gone, or `endedError` (not sent, the endpoint was disabled). At most
     * `limit`, the workspaces taking turns as in `unrecorded`. `oldest`: the earliest due time of
     * such a pair, found or not (null when there is none).
     *
     * Each step's records are read by "created_at" (the attempts whose next one came due in the
     * window were recorded in it shifted back by the step), and whether one is its pair's latest by
     * "webhook_deliveries_event_id_endpoint_id_created_at_idx".
     */
    async dueRetries(window: {
      from: Date | null;
      until: Date;
      lookbackMs: number;
      schedule: readonly number[];
      endedError: string;
      limit: number;
    }): Promise<{ retries: DueRetry[]; oldest: Date | null }> {
      const rows = await tx.$queryRawUnsafe<(DueRetry & { oldest: Date })[]>(
        `WITH "bounds" AS MATERIALIZED (
           SELECT GREATEST(CURRENT_TIMESTAMP - $3::int * interval '1 millisecond', COALESCE($1::timestamptz, '-infinity')) AS "from"
         ), "due" AS (
           -- One range of the "created_at" index per step, never a scan of the whole table (OFFSET 0 keeps
           -- the planner from flattening the LATERAL into a join it may answer with one).
           SELECT d.*, d."recorded_at" + s."delay_ms" * interval '1 millisecond' AS "due_at"
             FROM unnest($4::bigint[]) WITH ORDINALITY AS s("delay_ms", "attempt")
             CROSS JOIN LATERAL (
               SELECT f."id", f."workspace_id", f."endpoint_id", f."event_id", f."event_type", f."attempt", f."created_at" AS "recorded_at"
                 FROM "webhook_deliveries" f
                WHERE f."created_at" >= (SELECT "from" FROM "bounds") - s."delay_ms" * interval '1 millisecond'
                  AND f."created_at" < $2::timestamptz - s."delay_ms" * interval '1 millisecond'
                  AND f."attempt" = s."attempt" AND f."status" = 'failed'
                  AND f."response_status" IS DISTINCT FROM 410 AND f."error" IS DISTINCT FROM $5::text
               OFFSET 0
             ) d
            WHERE NOT EXISTS (
              SELECT 1 FROM "webhook_deliveries" l
               WHERE l."event_id" = d."event_id" AND l."endpoint_id" = d."endpoint_id" AND l."created_at" >= d."recorded_at"
                 AND (l."created_at", l."attempt", l."id") > (d."recorded_at", d."attempt", d."id"))
         ), "pairs" AS (
           SELECT e."id", e."workspace_id", e."type", e."data", e."created_at", e."traceparent", r."endpoint_id", r."attempt", r."recorded_at", r."due_at",
                  row_number() OVER (PARTITION BY r."workspace_id" ORDER BY r."due_at", r."event_id", r."endpoint_id") AS "turn",
                  min(r."due_at") OVER () AS "oldest"
             FROM "due" r
             JOIN "outbox_events" e ON e."id" = r."event_id" AND e."workspace_id" = r."workspace_id"
             JOIN "webhook_endpoints" ep ON ep."id" = r."endpoint_id" AND ep."workspace_id" = r."workspace_id"
            WHERE ep."enabled" AND ('*' = ANY(ep."events") OR r."event_type" = ANY(ep."events"))
         )
         SELECT "id", "workspace_id" AS "workspaceId", "type", "data", "created_at" AS "createdAt", "traceparent", "endpoint_id" AS "endpointId",
                "attempt", "recorded_at" AS "recordedAt", "due_at" AS "dueAt", "oldest"
           FROM "pairs" ORDER BY "turn", "due_at", "id", "endpoint_id" LIMIT $6::int`,
        window.from,
        window.until,
        window.lookbackMs,
        window.schedule,
        window.endedError,
        window.limit,
      );
      return { retries: rows.map(({ oldest: _, ...retry }) => retry), oldest: rows[0]?.oldest ?? null };
    },

    /** Those of these (event, endpoint) pairs that have a delivery record written after `since` (their latest one when read). */
    recordedAfter(pairs: { eventId: string; endpointId: string; since: Date }[]): Promise<{ eventId: string; endpointId: string }[]> {
      return Promise.resolve(
        tx.$queryRawUnsafe<{ eventId: string; endpointId: string }[]>(
          `SELECT DISTINCT d."event_id" AS "eventId", d."endpoint_id" AS "endpointId"
             FROM unnest($1::text[], $2::uuid[], $3::timestamptz[]) AS p("event_id", "endpoint_id", "since")
             JOIN "webhook_deliveries" d ON d."event_id" = p."event_id" AND d."endpoint_id" = p."endpoint_id" AND d."created_at" > p."since"`,
          pairs.map((p) => p.eventId),
          pairs.map((p) => p.endpointId),
          pairs.map((p) => p.since),
        ),
      );
    },

    /** Those of these (event, endpoint) pairs, published from `from` on, that have a delivery record now. */
    recorded(pairs: { eventId: string; endpointId: string }[], from: Date): Promise<{ eventId: string; endpointId: string }[]> {
      return Promise.resolve(
        tx.$queryRawUnsafe<{ eventId: string; endpointId: string }[]>(
          `SELECT DISTINCT d."event_id" AS "eventId", d."endpoint_id" AS "endpointId"
             FROM unnest($1::text[], $2::uuid[]) AS p("event_id", "endpoint_id")
             JOIN "webhook_deliveries" d ON d."endpoint_id" = p."endpoint_id" AND d."event_id" = p."event_id"
            WHERE d."created_at" >= $3::timestamptz - $4::int * interval '1 millisecond'`,
          pairs.map((p) => p.eventId),
          pairs.map((p) => p.endpointId),
          from,
          REPUBLISHED_MARGIN_MS,
        ),
      );
    },
  };
}
export type RequeueStore = ReturnType<typeof requeueStore>;
