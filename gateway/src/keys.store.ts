import { afterCursor, LIST_ORDER, type Cursor } from '@platform/core';
import type { Database } from './database';
import type { Workspace } from './generated/prisma/client';

export type { Workspace };

/**
 * An API key row. `scopes` null = unrestricted; Prisma reads a NULL list as [], so every
 * api_keys query that returns or writes scopes is SQL here.
 */
export interface ApiKey {
  id: string;
  workspaceId: string;
  name: string;
  scopes: string[] | null;
  tokenHash: string;
  tokenPrefix: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
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
  last_used_at: Date | null;
}

function apiKeyFromRow(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    scopes: row.scopes,
    tokenHash: row.token_hash,
    tokenPrefix: row.token_prefix,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}

/** Every query of the gateway: workspaces and their API keys. */
export function keysStore(db: Database) {
  return {
    createWorkspace(name: string): Promise<Workspace> {
      return db.workspace.create({ data: { name } });
    },

    findWorkspace(id: string): Promise<Workspace | null> {
      return db.workspace.findUnique({ where: { id } });
    },

    listWorkspaces(filter: { after?: Cursor; take: number }): Promise<Workspace[]> {
      return db.workspace.findMany({ where: afterCursor(filter.after), orderBy: [...LIST_ORDER], take: filter.take });
    },

    /** The oldest workspace with this name, created when there is none; concurrent callers get the same one. */
    findOrCreateWorkspaceByName(name: string): Promise<Workspace> {
      return db.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`workspace-name:${name}`}))`;
        const found = await tx.workspace.findFirst({ where: { name }, orderBy: [...LIST_ORDER] });
        return found ?? tx.workspace.create({ data: { name } });
      });
    },

    async createApiKey(
      workspaceId: string,
      data: { name: string; scopes: string[] | null; tokenHash: string; tokenPrefix: string; expiresAt: Date | null },
    ): Promise<ApiKey> {
      const rows = await db.$queryRaw<ApiKeyRow[]>`
        INSERT INTO "api_keys" ("id", "workspace_id", "name", "scopes", "token_hash", "token_prefix", "expires_at")
        VALUES (gen_random_uuid(), ${workspaceId}::uuid, ${data.name}, ${data.scopes}::text[], ${data.tokenHash}, ${data.tokenPrefix}, ${data.expiresAt}::timestamptz)
        RETURNING *`;
      return apiKeyFromRow(rows[0]!);
    },

    async listApiKeys(workspaceId: string, filter: { after?: Cursor; take: number }): Promise<ApiKey[]> {
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

    async findApiKeyByTokenHash(tokenHash: string): Promise<ApiKey | null> {
      const rows = await db.$queryRaw<ApiKeyRow[]>`SELECT * FROM "api_keys" WHERE "token_hash" = ${tokenHash}`;
      return rows[0] ? apiKeyFromRow(rows[0]) : null;
    },

    /** Sets revoked_at once (a second revocation keeps the first time); null when the workspace has no such key. */
    async revokeApiKey(workspaceId: string, keyId: string, now: Date): Promise<ApiKey | null> {
      const rows = await db.$queryRaw<ApiKeyRow[]>`
        UPDATE "api_keys" SET "revoked_at" = COALESCE("revoked_at", ${now}::timestamptz)
        WHERE "id" = ${keyId}::uuid AND "workspace_id" = ${workspaceId}::uuid
        RETURNING *`;
      return rows[0] ? apiKeyFromRow(rows[0]) : null;
    },

    /** One statement for a whole batch of last-use times; a time never moves backwards. */
    async touchLastUsed(entries: { keyId: string; usedAt: Date }[]): Promise<void> {
      if (entries.length === 0) return;
      const ids = entries.map((e) => e.keyId);
      const times = entries.map((e) => e.usedAt);
      await db.$executeRaw`
        UPDATE "api_keys" AS k SET "last_used_at" = GREATEST(COALESCE(k."last_used_at", v.t), v.t)
        FROM unnest(${ids}::uuid[], ${times}::timestamptz[]) AS v(id, t)
        WHERE k."id" = v.id`;
    },

    /** Resolves when the database answers (readiness). */
    ping(): Promise<unknown> {
      return db.$queryRaw`SELECT 1`;
    },
  };
}
export type KeysStore = ReturnType<typeof keysStore>;
