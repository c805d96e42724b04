import { afterCursor, LIST_ORDER, workspaceScoped, type Cursor, type WorkspaceId } from '@platform/core';
import type { Database } from './database';
import type { Prisma, RunLog } from './generated/prisma/client';
import type { RunLogEntry } from './run-logs';

type Tx = Prisma.TransactionClient;

function jsonOrNull(data: Record<string, unknown> | null): string | null {
  return data === null ? null : JSON.stringify(data);
}

/** Writes one line of run `runId` in transaction `tx`; its id is run_log_id(at) (time-ordered, in write order). */
export async function writeRunLog(tx: Tx, workspaceId: WorkspaceId, runId: string, entry: RunLogEntry, at: Date): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO "run_logs" ("id", "workspace_id", "run_id", "attempt", "at", "level", "message", "data")
    VALUES (run_log_id(${at}::timestamptz), ${workspaceId}::uuid, ${runId}::uuid, ${entry.attempt}, ${at}::timestamptz,
            ${entry.level}::"run_log_level", ${entry.message}, ${jsonOrNull(entry.data)}::jsonb)`;
}

/**
 * Writes the line only while `entry.attempt` still holds the running run (the attempt fencing of
 * the run's own updates); false when it does not (cancelled, replaced).
 */
export async function writeRunLogIfHeld(tx: Tx, workspaceId: WorkspaceId, runId: string, entry: RunLogEntry, at: Date): Promise<boolean> {
  const inserted = await tx.$executeRaw`
    INSERT INTO "run_logs" ("id", "workspace_id", "run_id", "attempt", "at", "level", "message", "data")
    SELECT run_log_id(${at}::timestamptz), r."workspace_id", r."id", ${entry.attempt}, ${at}::timestamptz,
           ${entry.level}::"run_log_level", ${entry.message}, ${jsonOrNull(entry.data)}::jsonb
      FROM "runs" r
     WHERE r."id" = ${runId}::uuid AND r."workspace_id" = ${workspaceId}::uuid AND r."status" = 'running' AND r."attempts" = ${entry.attempt}`;
  return inserted === 1;
}

/** Reading a run's lines, oldest first, in (at, id) order; each query takes the workspace, so none can forget it. */
export function runLogsStore(db: Database) {
  return workspaceScoped({
    list(workspaceId: WorkspaceId, runId: string, page: { after: Cursor | undefined; take: number }): Promise<RunLog[]> {
      return db.runLog.findMany({ where: { workspaceId, runId, ...afterCursor(page.after) }, orderBy: [...LIST_ORDER], take: page.take });
    },
  });
}
export type RunLogsStore = ReturnType<typeof runLogsStore>;
