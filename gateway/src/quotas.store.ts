import { workspaceScoped, type QuotaName, type WorkspaceId } from '@platform/core';
import type { Database } from './database';
import { Prisma } from './generated/prisma/client';

/** The quotas set for a workspace (contract section 20); null = the platform default. */
export type QuotaSettings = Record<QuotaName, number | null>;

/** The quota columns as `quotaSettingsFromRow` reads them, from the `workspace_quotas` row aliased `q` (all NULL without one). */
export const QUOTA_COLUMNS = Prisma.sql`q."pipelines" AS "quota_pipelines", q."scheduled_pipelines" AS "quota_scheduled_pipelines",
  q."webhook_endpoints" AS "quota_webhook_endpoints", q."idempotency_bytes" AS "quota_idempotency_bytes"`;

export interface QuotaColumns {
  quota_pipelines: number | null;
  quota_scheduled_pipelines: number | null;
  quota_webhook_endpoints: number | null;
  /** BIGINT: read as a bigint; at most MAX_IDEMPOTENCY_BYTES_QUOTA, so a safe number. */
  quota_idempotency_bytes: bigint | number | null;
}

export function quotaSettingsFromRow(row: QuotaColumns): QuotaSettings {
  return {
    pipelines: row.quota_pipelines,
    scheduled_pipelines: row.quota_scheduled_pipelines,
    webhook_endpoints: row.quota_webhook_endpoints,
    idempotency_bytes: row.quota_idempotency_bytes === null ? null : Number(row.quota_idempotency_bytes),
  };
}

/** A key whose cached record a quota change made stale. */
export interface ChangedKey {
  id: string;
  tokenHash: string;
}

/** A statement's CASE for one quota column: the value given (null writes NULL), else the column as it is. */
function assigned(column: QuotaName, change: Partial<QuotaSettings>, type: 'integer' | 'bigint'): Prisma.Sql {
  const name = Prisma.raw(`"${column}"`);
  const value = change[column];
  const cast = Prisma.raw(type);
  return Prisma.sql`${name} = CASE WHEN ${value !== undefined} THEN ${value ?? null}::${cast} ELSE q.${name} END`;
}

/** The queries of a workspace's quotas; part of its keys store (keys.store.ts). */
export function workspaceQuotaQueries(db: Database) {
  return workspaceScoped({
    /** The quotas set for a workspace (null where it has the default); null when there is no such workspace. */
    async findWorkspaceQuotas(workspaceId: WorkspaceId): Promise<QuotaSettings | null> {
      const rows = await db.$queryRaw<QuotaColumns[]>`
        SELECT ${QUOTA_COLUMNS} FROM "workspaces" AS w LEFT JOIN "workspace_quotas" AS q ON q."workspace_id" = w."id"
        WHERE w."id" = ${workspaceId}::uuid`;
      return rows[0] ? quotaSettingsFromRow(rows[0]) : null;
    },

    /**
     * Sets the quotas given (undefined = unchanged, null = back to the default) and logs every
     * unrevoked key of the workspace in the key-change log, in one transaction, so each gateway
     * drops those keys and reads them again with the new quotas. Null when there is no such workspace.
     */
    updateWorkspaceQuotas(workspaceId: WorkspaceId, change: Partial<QuotaSettings>): Promise<{ quotas: QuotaSettings; keys: ChangedKey[] } | null> {
      return db.$transaction(async (tx) => {
        // FOR UPDATE waits for, then holds off, every insert of a key of this workspace (its foreign
        // key check takes a KEY SHARE lock on this row): a key created at the same moment is either
        // committed before and logged below, or read after this commits, with the new quotas.
        const workspace = await tx.$queryRaw<unknown[]>`SELECT 1 FROM "workspaces" WHERE "id" = ${workspaceId}::uuid FOR UPDATE`;
        if (workspace.length === 0) return null;
        const saved = await tx.$queryRaw<QuotaColumns[]>`
          INSERT INTO "workspace_quotas" AS q ("workspace_id", "pipelines", "scheduled_pipelines", "webhook_endpoints", "idempotency_bytes")
          VALUES (${workspaceId}::uuid, ${change.pipelines ?? null}::integer, ${change.scheduled_pipelines ?? null}::integer,
                  ${change.webhook_endpoints ?? null}::integer, ${change.idempotency_bytes ?? null}::bigint)
          ON CONFLICT ("workspace_id") DO UPDATE SET
            ${assigned('pipelines', change, 'integer')},
            ${assigned('scheduled_pipelines', change, 'integer')},
            ${assigned('webhook_endpoints', change, 'integer')},
            ${assigned('idempotency_bytes', change, 'bigint')},
            "updated_at" = now()
          RETURNING ${QUOTA_COLUMNS}`;
        const logged = await tx.$queryRaw<{ key_id: string; token_hash: string }[]>`
          INSERT INTO "api_key_changes" ("key_id", "token_hash")
          SELECT "id", "token_hash" FROM "api_keys" WHERE "workspace_id" = ${workspaceId}::uuid AND "revoked_at" IS NULL
          RETURNING "key_id"::text, "token_hash"`;
        return { quotas: quotaSettingsFromRow(saved[0]!), keys: logged.map((row) => ({ id: row.key_id, tokenHash: row.token_hash })) };
      });
    },
  });
}
