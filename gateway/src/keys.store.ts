import {
  afterCursor,
  LIST_ORDER,
  lockWorkspaceQuota,
  workspaceScoped,
  type BucketName,
  type Cursor,
  type QuotaReached,
  type WorkspaceId,
} from '@platform/core';
import type { Database } from './database';
import { Prisma, type Workspace as WorkspaceRow } from './generated/prisma/client';
import { apiKeysLimitReached, rollAddsHeldKey } from './keys.limit';
import { QUOTA_COLUMNS, quotaSettingsFromRow, workspaceQuotaQueries, type QuotaColumns, type QuotaSettings } from './quotas.store';

/** A workspace row; its id is the `WorkspaceId` that every query of its resources takes. */
export type Workspace = Omit<WorkspaceRow, 'id'> & { id: WorkspaceId };

const workspaceFromRow = (row: WorkspaceRow): Workspace => ({ ...row, id: row.id as WorkspaceId });

/** A key's own limits per bucket (requests per minute); a bucket not named keeps the platform's limit. */
export type RateLimits = Partial<Record<BucketName, number>>;

/**
 * An API key row. `scopes` null = unrestricted; Prisma reads a NULL list as [], so every
 * api_keys query that returns or writes scopes is SQL here.
 */
export interface ApiKey {
  id: string;
  workspaceId: WorkspaceId;
  name: string;
  scopes: string[] | null;
  tokenHash: string;
  tokenPrefix: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  /** When a roll replaced this key (it works until its overlap ends); null: never rolled. */
  rolledAt: Date | null;
  lastUsedAt: Date | null;
  /** null = the platform's limits. */
  rateLimits: RateLimits | null;
}

interface ApiKeyRow {
  id: string;
  workspace_id: string;
  name: string;
  scopes: string[] | null;
  token_hash: string;
  token_prefix: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  rolled_at: Date | null;
  last_used_at: Date | null;
  rate_limits: RateLimits | null;
}

function apiKeyFromRow(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    workspaceId: row.workspace_id as WorkspaceId,
    name: row.name,
    scopes: row.scopes,
    tokenHash: row.token_hash,
    tokenPrefix: row.token_prefix,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    rolledAt: row.rolled_at,
    lastUsedAt: row.last_used_at,
    rateLimits: row.rate_limits,
  };
}

/** A JSONB parameter: SQL NULL for null (JSON.stringify would store the JSON value null). */
const jsonb = (value: object | null): string | null => (value === null ? null : JSON.stringify(value));

/** The status classes of a key's usage, in the order of the usage table's columns. */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '429', '5xx'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/** Requests of one key in one UTC hour, per status class (in `STATUS_CLASSES` order). */
export interface UsageCount {
  keyId: string;
  hour: Date;
  counts: readonly number[];
}

export interface UsageBucket {
  start: Date;
  counts: Record<StatusClass, number>;
}

export type UsageGranularity = 'hour' | 'day';

/** How long hourly usage is kept, and how long a flush is remembered for recognising its retry. */
export const USAGE_RETENTION_DAYS = 90;
const FLUSH_MEMORY = '1 day';

/** One row of the key-change log. */
export interface KeyChange {
  seq: bigint;
  /** The writing transaction's id. */
  txid: bigint;
  keyId: string;
  tokenHash: string;
}

/** The part of a statement that logs the key rows of its `changed` CTE in the key-change log (same statement, same transaction). */
const logKeyChanges = Prisma.sql`INSERT INTO "api_key_changes" ("key_id", "token_hash") SELECT "id", "token_hash" FROM changed`;

export type RollOutcome =
  | { outcome: 'not_found' }
  | { outcome: 'conflict'; key: ApiKey }
  | { outcome: 'limit_reached'; limit: number }
  | { outcome: 'rolled'; old: ApiKey; key: ApiKey };

export type CreateApiKeyResult = { kind: 'created'; key: ApiKey } | QuotaReached;

/** A new key's columns (the token only as its hash and prefix). */
export interface NewApiKeyRow {
  name: string;
  scopes: readonly string[] | null;
  tokenHash: string;
  tokenPrefix: string;
  expiresAt: Date | null;
  rateLimits: RateLimits | null;
}

/**
 * How many keys the workspace holds at `now` (keys.limit.ts), counted up to `limit` only, on the
 * partial index "api_keys_held_workspace_id_expires_at_idx", which leaves revoked and rolled keys out.
 */
async function countHeldKeys(tx: Prisma.TransactionClient, workspaceId: WorkspaceId, now: Date, limit: number): Promise<number> {
  const rows = await tx.$queryRaw<{ held: number }[]>`
    SELECT count(*)::int AS "held" FROM (
      SELECT 1 FROM "api_keys"
      WHERE "workspace_id" = ${workspaceId}::uuid AND "revoked_at" IS NULL AND "rolled_at" IS NULL
        AND ("expires_at" IS NULL OR "expires_at" > ${now}::timestamptz)
      LIMIT ${limit}
    ) AS s`;
  return rows[0]!.held;
}

async function insertApiKey(client: Prisma.TransactionClient | Database, workspaceId: WorkspaceId, data: NewApiKeyRow): Promise<ApiKey> {
  const rows = await client.$queryRaw<ApiKeyRow[]>`
    INSERT INTO "api_keys" ("id", "workspace_id", "name", "scopes", "token_hash", "token_prefix", "expires_at", "rate_limits")
    VALUES (gen_random_uuid(), ${workspaceId}::uuid, ${data.name}, ${data.scopes}::text[], ${data.tokenHash}, ${data.tokenPrefix},
            ${data.expiresAt}::timestamptz, ${jsonb(data.rateLimits)}::jsonb)
    RETURNING *`;
  return apiKeyFromRow(rows[0]!);
}

/** A key as the hot path reads it: with its workspace's quotas (contract section 20), in one query. */
export interface KeyWithQuotas {
  key: ApiKey;
  quotas: QuotaSettings;
}

/**
 * A workspace's own queries: the workspace, its API keys and their usage, its quotas. Every method
 * takes the `WorkspaceId` first (`workspaceScoped`): a query that forgets it does not compile.
 */
export function keysStore(db: Database) {
  return workspaceScoped({
    ...workspaceQuotaQueries(db),

    async findWorkspace(workspaceId: WorkspaceId): Promise<Workspace | null> {
      const row = await db.workspace.findUnique({ where: { id: workspaceId } });
      return row ? workspaceFromRow(row) : null;
    },

    /**
     * Inserts the key unless the workspace already holds `limit` keys at `now`: counted and inserted
     * under the workspace's quota lock, so concurrent creates never pass the limit. `limit` null: not
     * counted (`demo-seed`, which the operator runs on the database, and test fixtures).
     */
    async createApiKey(workspaceId: WorkspaceId, data: NewApiKeyRow, limit: number | null, now = new Date()): Promise<CreateApiKeyResult> {
      if (limit === null) return { kind: 'created', key: await insertApiKey(db, workspaceId, data) };
      return db.$transaction(async (tx): Promise<CreateApiKeyResult> => {
        await lockWorkspaceQuota(tx, 'api_keys', workspaceId);
        const refused = apiKeysLimitReached(await countHeldKeys(tx, workspaceId, now, limit), limit);
        if (refused) return refused;
        return { kind: 'created', key: await insertApiKey(tx, workspaceId, data) };
      });
    },

    async findApiKey(workspaceId: WorkspaceId, keyId: string): Promise<ApiKey | null> {
      const rows = await db.$queryRaw<ApiKeyRow[]>`
        SELECT * FROM "api_keys" WHERE "id" = ${keyId}::uuid AND "workspace_id" = ${workspaceId}::uuid`;
      return rows[0] ? apiKeyFromRow(rows[0]) : null;
    },

    /**
     * Changes the fields given (undefined = unchanged; null scopes or limits are written as NULL) and
     * logs the change for every gateway, in one statement; null when the workspace has no such key.
     */
    async updateApiKey(
      workspaceId: WorkspaceId,
      keyId: string,
      change: { name?: string; scopes?: readonly string[] | null; rateLimits?: RateLimits | null },
    ): Promise<ApiKey | null> {
      const rows = await db.$queryRaw<ApiKeyRow[]>`
        WITH changed AS (
          UPDATE "api_keys" SET
            "name" = CASE WHEN ${change.name !== undefined} THEN ${change.name ?? null}::text ELSE "name" END,
            "scopes" = CASE WHEN ${change.scopes !== undefined} THEN ${change.scopes ?? null}::text[] ELSE "scopes" END,
            "rate_limits" = CASE WHEN ${change.rateLimits !== undefined} THEN ${jsonb(change.rateLimits ?? null)}::jsonb ELSE "rate_limits" END
          WHERE "id" = ${keyId}::uuid AND "workspace_id" = ${workspaceId}::uuid
          RETURNING *
        ), logged AS (${logKeyChanges})
        SELECT * FROM changed`;
      return rows[0] ? apiKeyFromRow(rows[0]) : null;
    },

    /**
     * Rolls a key in one transaction: the old row is locked, refused when revoked or expired at
     * `now`, given `expires_at = least(expires_at, oldExpiresAt)` and `rolled_at` (logged for every
     * gateway), and a new key with its name, scopes and limits is inserted. A key rolled already is
     * rolled only while the workspace holds fewer than `limit` keys (keys.limit.ts), counted under
     * its quota lock as a create is. Two concurrent rolls of one key run one after the other.
     */
    rollApiKey(
      workspaceId: WorkspaceId,
      keyId: string,
      now: Date,
      oldExpiresAt: Date,
      token: { tokenHash: string; tokenPrefix: string },
      limit: number,
    ): Promise<RollOutcome> {
      return db.$transaction(async (tx): Promise<RollOutcome> => {
        // The quota lock before the row lock, in the order a create takes it.
        await lockWorkspaceQuota(tx, 'api_keys', workspaceId);
        const found = await tx.$queryRaw<ApiKeyRow[]>`
          SELECT * FROM "api_keys" WHERE "id" = ${keyId}::uuid AND "workspace_id" = ${workspaceId}::uuid FOR UPDATE`;
        if (!found[0]) return { outcome: 'not_found' };
        const current = apiKeyFromRow(found[0]);
        if (current.revokedAt !== null || (current.expiresAt !== null && current.expiresAt.getTime() <= now.getTime())) {
          return { outcome: 'conflict', key: current };
        }
        if (rollAddsHeldKey(current)) {
          const refused = apiKeysLimitReached(await countHeldKeys(tx, workspaceId, now, limit), limit);
          if (refused) return { outcome: 'limit_reached', limit: refused.limit };
        }
        const old = await tx.$queryRaw<ApiKeyRow[]>`
          WITH changed AS (
            UPDATE "api_keys" SET "expires_at" = LEAST(COALESCE("expires_at", ${oldExpiresAt}::timestamptz), ${oldExpiresAt}::timestamptz),
                                  "rolled_at" = COALESCE("rolled_at", ${now}::timestamptz)
            WHERE "id" = ${keyId}::uuid RETURNING *
          ), logged AS (${logKeyChanges})
          SELECT * FROM changed`;
        const created = await tx.$queryRaw<ApiKeyRow[]>`
          INSERT INTO "api_keys" ("id", "workspace_id", "name", "scopes", "token_hash", "token_prefix", "expires_at", "rate_limits", "created_at")
          SELECT gen_random_uuid(), "workspace_id", "name", "scopes", ${token.tokenHash}, ${token.tokenPrefix}, NULL, "rate_limits", ${now}::timestamptz
          FROM "api_keys" WHERE "id" = ${keyId}::uuid
          RETURNING *`;
        return { outcome: 'rolled', old: apiKeyFromRow(old[0]!), key: apiKeyFromRow(created[0]!) };
      });
    },

    async listApiKeys(workspaceId: WorkspaceId, filter: { after?: Cursor; take: number }): Promise<ApiKey[]> {
      const after = filter.after;
      const rows = after
        ? await db.$queryRaw<ApiKeyRow[]>`
            SELECT * FROM "api_keys"
            WHERE "workspace_id" = ${workspaceId}::uuid AND ("created_at", "id") > (${after.createdAt}::timestamptz, ${after.id}::uuid)
            ORDER BY "created_at", "id" LIMIT ${filter.take}`
        : await db.$queryRaw<ApiKeyRow[]>`
            SELECT * FROM "api_keys" WHERE "workspace_id" = ${workspaceId}::uuid
            ORDER BY "created_at", "id" LIMIT ${filter.take}`;
      return rows.map(apiKeyFromRow);
    },

    /**
     * Sets revoked_at once (a second revocation keeps the first time) and logs the change for every
     * gateway, in one statement; null when the workspace has no such key.
     */
    async revokeApiKey(workspaceId: WorkspaceId, keyId: string, now: Date): Promise<ApiKey | null> {
      const rows = await db.$queryRaw<ApiKeyRow[]>`
        WITH changed AS (
          UPDATE "api_keys" SET "revoked_at" = COALESCE("revoked_at", ${now}::timestamptz)
          WHERE "id" = ${keyId}::uuid AND "workspace_id" = ${workspaceId}::uuid
          RETURNING *
        ), logged AS (${logKeyChanges})
        SELECT * FROM changed`;
      return rows[0] ? apiKeyFromRow(rows[0]) : null;
    },

    /** A key's requests per UTC hour or day whose start is in [from, to), oldest first, buckets with traffic only. */
    async keyUsage(workspaceId: WorkspaceId, keyId: string, range: { from: Date; to: Date; granularity: UsageGranularity }): Promise<UsageBucket[]> {
      // A day's hours can lie up to a day before its start is in range: the hour bounds only narrow the index scan.
      const margin = range.granularity === 'day' ? 86_400_000 : 0;
      const rows = await db.$queryRaw<{ start: Date; s2: bigint; s3: bigint; s4: bigint; s429: bigint; s5: bigint }[]>`
        SELECT u.start, sum(u."status_2xx") AS s2, sum(u."status_3xx") AS s3, sum(u."status_4xx") AS s4, sum(u."status_429") AS s429, sum(u."status_5xx") AS s5
        FROM (
          SELECT date_trunc(${range.granularity}, "hour", 'UTC') AS start, "status_2xx", "status_3xx", "status_4xx", "status_429", "status_5xx"
          FROM "api_key_usage"
          WHERE "key_id" = ${keyId}::uuid AND "workspace_id" = ${workspaceId}::uuid
            AND "hour" >= ${new Date(range.from.getTime() - margin)}::timestamptz AND "hour" < ${new Date(range.to.getTime() + margin)}::timestamptz
        ) AS u
        WHERE u.start >= ${range.from}::timestamptz AND u.start < ${range.to}::timestamptz
        GROUP BY u.start
        ORDER BY u.start`;
      return rows.map((row) => ({
        start: row.start,
        counts: { '2xx': Number(row.s2), '3xx': Number(row.s3), '4xx': Number(row.s4), '429': Number(row.s429), '5xx': Number(row.s5) },
      }));
    },
  });
}
export type KeysStore = ReturnType<typeof keysStore>;

/**
 * The gateway's queries that no single workspace owns: creating and listing workspaces, the hot
 * path's lookup by token hash (the token names the workspace), the key activity every instance
 * flushes, the key-change log every instance reads, and the readiness ping.
 */
export function crossWorkspaceKeysStore(db: Database) {
  return {
    async createWorkspace(name: string): Promise<Workspace> {
      return workspaceFromRow(await db.workspace.create({ data: { name } }));
    },

    async listWorkspaces(filter: { after?: Cursor; take: number }): Promise<Workspace[]> {
      const rows = await db.workspace.findMany({ where: afterCursor(filter.after), orderBy: [...LIST_ORDER], take: filter.take });
      return rows.map(workspaceFromRow);
    },

    /** The oldest workspace with this name, created when there is none; concurrent callers get the same one. */
    async findOrCreateWorkspaceByName(name: string): Promise<Workspace> {
      const row = await db.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`workspace-name:${name}`}))`;
        const found = await tx.workspace.findFirst({ where: { name }, orderBy: [...LIST_ORDER] });
        return found ?? tx.workspace.create({ data: { name } });
      });
      return workspaceFromRow(row);
    },

    /** The key of a token hash and its workspace's quotas: what the key cache holds, so a request costs no further query. */
    async findApiKeyByTokenHash(tokenHash: string): Promise<KeyWithQuotas | null> {
      const rows = await db.$queryRaw<(ApiKeyRow & QuotaColumns)[]>`
        SELECT k.*, ${QUOTA_COLUMNS}
        FROM "api_keys" AS k LEFT JOIN "workspace_quotas" AS q ON q."workspace_id" = k."workspace_id"
        WHERE k."token_hash" = ${tokenHash}`;
      return rows[0] ? { key: apiKeyFromRow(rows[0]), quotas: quotaSettingsFromRow(rows[0]) } : null;
    },

    /**
     * Writes what a gateway counted since its last flush, in one transaction: last-use times (never
     * moved backwards) and requests added to each key's hourly usage. `flushId` makes it idempotent:
     * a flush retried after its answer was lost (it may have committed) is not added twice.
     */
    async recordKeyActivity(flushId: string, lastUsed: { keyId: string; usedAt: Date }[], usage: UsageCount[]): Promise<void> {
      // Rows in key order, so two gateways flushing the same keys lock them in the same order.
      const byKey = [...usage].sort((a, b) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : a.hour.getTime() - b.hour.getTime()));
      const column = (i: number) => byKey.map((u) => u.counts[i] ?? 0);
      const touched = [...lastUsed].sort((a, b) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0));
      await db.$transaction(async (tx) => {
        const claimed = await tx.$executeRaw`INSERT INTO "api_key_usage_flushes" ("id") VALUES (${flushId}::uuid) ON CONFLICT DO NOTHING`;
        if (claimed === 0) return;
        if (byKey.length > 0) {
          await tx.$executeRaw`
            INSERT INTO "api_key_usage" ("key_id", "workspace_id", "hour", "status_2xx", "status_3xx", "status_4xx", "status_429", "status_5xx")
            SELECT v.key_id, k."workspace_id", v.hour, v.s2, v.s3, v.s4, v.s429, v.s5
            FROM unnest(${byKey.map((u) => u.keyId)}::uuid[], ${byKey.map((u) => u.hour)}::timestamptz[], ${column(0)}::bigint[],
                        ${column(1)}::bigint[], ${column(2)}::bigint[], ${column(3)}::bigint[], ${column(4)}::bigint[])
                 WITH ORDINALITY AS v(key_id, hour, s2, s3, s4, s429, s5, n)
            JOIN "api_keys" AS k ON k."id" = v.key_id
            ORDER BY v.n
            ON CONFLICT ("key_id", "hour") DO UPDATE SET
              "status_2xx" = "api_key_usage"."status_2xx" + EXCLUDED."status_2xx",
              "status_3xx" = "api_key_usage"."status_3xx" + EXCLUDED."status_3xx",
              "status_4xx" = "api_key_usage"."status_4xx" + EXCLUDED."status_4xx",
              "status_429" = "api_key_usage"."status_429" + EXCLUDED."status_429",
              "status_5xx" = "api_key_usage"."status_5xx" + EXCLUDED."status_5xx"`;
        }
        if (touched.length > 0) {
          await tx.$executeRaw`
            UPDATE "api_keys" AS k SET "last_used_at" = GREATEST(COALESCE(k."last_used_at", v.t), v.t)
            FROM unnest(${touched.map((e) => e.keyId)}::uuid[], ${touched.map((e) => e.usedAt)}::timestamptz[]) AS v(id, t)
            WHERE k."id" = v.id`;
        }
      });
    },

    /** Drops usage older than the retention and flush ids too old to be retried. */
    async pruneKeyActivity(): Promise<void> {
      await db.$executeRaw`DELETE FROM "api_key_usage" WHERE "hour" < now() - make_interval(days => ${USAGE_RETENTION_DAYS})`;
      await db.$executeRaw`DELETE FROM "api_key_usage_flushes" WHERE "flushed_at" < now() - ${FLUSH_MEMORY}::interval`;
    },

    /**
     * The key-change log's starting point for a reader that knows nothing yet: the xmin of the
     * current snapshot. Every transaction below it has ended, so every change below it is already
     * in what a key lookup made from now on reads.
     */
    async keyChangesHorizon(): Promise<bigint> {
      const rows = await db.$queryRaw<{ horizon: bigint }[]>`SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon`;
      return rows[0]!.horizon;
    },

    /**
     * Changes not read yet: rows whose transaction id is at or above `horizon` (the reader has every
     * row below it) other than the `seen` ones, in (txid, seq) order, and the xmin of the same
     * snapshot (every transaction below it has ended: no row below it can appear any more).
     */
    async readKeyChanges(horizon: bigint, seen: readonly bigint[], limit: number): Promise<{ changes: KeyChange[]; xmin: bigint }> {
      const rows = await db.$queryRaw<{ xmin: bigint; seq: bigint | null; txid: bigint | null; key_id: string | null; token_hash: string | null }[]>`
        SELECT s.xmin, c."seq", c."txid", c."key_id", c."token_hash"
        FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin) AS s
        LEFT JOIN LATERAL (
          SELECT "seq", "txid", "key_id"::text, "token_hash" FROM "api_key_changes"
          WHERE "txid" >= ${horizon}::bigint AND NOT ("seq" = ANY(${seen.map(String)}::bigint[]))
          ORDER BY "txid", "seq"
          LIMIT ${limit}
        ) AS c ON true`;
      const changes = rows.filter((row) => row.seq !== null).map((row) => ({ seq: row.seq!, txid: row.txid!, keyId: row.key_id!, tokenHash: row.token_hash! }));
      return { changes, xmin: rows[0]!.xmin };
    },

    /**
     * Deletes log rows written more than `retentionMs` ago, in batches of `batch`. Rows another
     * gateway is deleting at the same moment are skipped, not waited for. Returns how many.
     */
    async pruneKeyChanges(retentionMs: number, batch: number): Promise<number> {
      let deleted = 0;
      for (;;) {
        const n = await db.$executeRaw`
          DELETE FROM "api_key_changes" WHERE "seq" IN (
            SELECT "seq" FROM "api_key_changes"
            WHERE "created_at" < clock_timestamp() - make_interval(secs => ${retentionMs / 1000}::double precision)
            LIMIT ${batch} FOR UPDATE SKIP LOCKED)`;
        deleted += n;
        if (n < batch) return deleted;
      }
    },

    /** Resolves when the database answers (readiness). */
    ping(): Promise<unknown> {
      return db.$queryRaw`SELECT 1`;
    },
  };
}
export type CrossWorkspaceKeysStore = ReturnType<typeof crossWorkspaceKeysStore>;

/** The gateway's stores over one client: what its app is given instead of the client. */
export function gatewayStores(db: Database) {
  return { keys: keysStore(db), crossWorkspace: crossWorkspaceKeysStore(db) };
}
export type GatewayStores = ReturnType<typeof gatewayStores>;
