import { workspaceScoped, type SeriesWindow, type WorkspaceId } from '@platform/core';
import type { Database } from './database';

/** A bucket's runs in one status; `status` null: the bucket has no run. */
export interface RunBucketRow {
  start: Date;
  status: string | null;
  count: number;
}

/** The runs series query (GET /pipelines/{id}/stats/series). */
export function runSeriesStore(db: Database) {
  return workspaceScoped({
    /**
     * The pipeline's runs per bucket of the window by their current status, counted by `created_at`
     * (when the trigger arrived): one row per bucket and status present, or one with status null for
     * an empty bucket, oldest first. Reads one range of the ("workspace_id", "pipeline_id", "created_at") index.
     */
    series(workspaceId: WorkspaceId, pipelineId: string, window: SeriesWindow): Promise<RunBucketRow[]> {
      return db.$queryRaw<RunBucketRow[]>`
        SELECT b."start", c."status", COALESCE(c."count", 0) AS "count"
          FROM generate_series(${window.from}::timestamptz, ${window.to}::timestamptz - ${window.step}::interval, ${window.step}::interval) AS b("start")
          LEFT JOIN (
            SELECT date_trunc(${window.interval}::text, r."created_at", 'UTC') AS "start", r."status"::text AS "status", count(*)::int AS "count"
              FROM "runs" r
             WHERE r."workspace_id" = ${workspaceId}::uuid AND r."pipeline_id" = ${pipelineId}::uuid
               AND r."created_at" >= ${window.from}::timestamptz AND r."created_at" < ${window.to}::timestamptz
             GROUP BY 1, 2
          ) c ON c."start" = b."start"
         ORDER BY b."start", c."status"`;
    },
  });
}
export type RunSeriesStore = ReturnType<typeof runSeriesStore>;
