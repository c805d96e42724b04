import {
  afterCursor,
  LIST_ORDER,
  lockWorkspaceQuota,
  workspaceScoped,
  type Cursor,
  type QuotaReached,
  type ServiceQuotaLimits,
  type WorkspaceId,
} from '@platform/core';
import { webhooksStore } from '@platform/webhooks';
import type { Database } from './database';
import { Prisma, type ConcurrencyPolicy, type Pipeline, type PipelineStatus } from './generated/prisma/client';
import { runsStore } from './runs.store';
import { runLogsStore } from './run-logs.store';
import { addsSchedule, createRefusal, scheduleTimes, setsSchedule, statusChange, updateRefusal } from './pipelines';
import type { Schedule } from './schedule';
import { runSeriesStore } from './runs.series.store';

export type { Pipeline, PipelineStatus };

export interface NewPipeline {
  name: string;
  sourceConnector: string;
  sourceConfig: Record<string, unknown>;
  destinationConnector: string;
  destinationConfig: Record<string, unknown>;
  /** null or absent: runs only when triggered. */
  schedule?: Schedule | null;
  /** Absent: reject (contract section 19). */
  concurrencyPolicy?: ConcurrencyPolicy;
  /** null or absent: no limit. */
  runTimeoutSeconds?: number | null;
}

/** PATCH /pipelines/{id}: absent fields stay; `schedule: null` removes the schedule. */
export interface PipelineChanges {
  name?: string;
  schedule?: Schedule | null;
  concurrencyPolicy?: ConcurrencyPolicy;
  /** null removes the limit. */
  runTimeoutSeconds?: number | null;
}

/** What a workspace holds of the quotas the pipelines table counts (contract section 20). */
export interface PipelinesUsage {
  pipelines: number;
  /** Pipelines with a schedule, paused or not. */
  scheduled_pipelines: number;
}

export type CreatePipelineResult = { kind: 'created'; pipeline: Pipeline } | QuotaReached;
export type UpdatePipelineResult = { kind: 'updated'; pipeline: Pipeline } | QuotaReached;

/**
 * Counts the workspace's pipelines (the (workspace_id, created_at) index) and those with a schedule
 * ("pipelines_scheduled_workspace_id_idx"), each read from its index alone.
 */
async function countUsage(client: Prisma.TransactionClient | Database, workspaceId: WorkspaceId): Promise<PipelinesUsage> {
  const rows = await client.$queryRaw<PipelinesUsage[]>`
    SELECT (SELECT count(*) FROM "pipelines" WHERE "workspace_id" = ${workspaceId}::uuid)::int AS "pipelines",
           (SELECT count(*) FROM "pipelines" WHERE "workspace_id" = ${workspaceId}::uuid AND "schedule" IS NOT NULL)::int AS "scheduled_pipelines"`;
  return rows[0]!;
}

/** The schedule columns for a schedule set at `now` (null removes it). */
function scheduleColumns(schedule: Schedule | null, status: PipelineStatus, now: Date) {
  return { schedule: schedule ?? Prisma.DbNull, ...scheduleTimes(schedule, status, now) };
}

/** Pipeline queries; each takes the workspace, so no query can forget it. */
export function pipelinesStore(db: Database) {
  /** Locks the pipeline row for the rest of `tx` (a tick of the scheduler holds it the same way). */
  async function lock(tx: Prisma.TransactionClient, workspaceId: WorkspaceId, id: string): Promise<Pipeline | null> {
    const locked = await tx.$queryRaw<{ id: string }[]>`
      SELECT "id" FROM "pipelines" WHERE "id" = ${id}::uuid AND "workspace_id" = ${workspaceId}::uuid FOR UPDATE`;
    if (locked.length === 0) return null;
    return tx.pipeline.findFirst({ where: { id, workspaceId } });
  }

  return workspaceScoped({
    /**
     * Creates the pipeline unless the workspace already holds `limits.pipelines` pipelines or, for a
     * scheduled one, `limits.scheduled_pipelines` scheduled ones: counted and inserted under the
     * workspace's quota lock, so concurrent creates never pass a quota.
     */
    async create(workspaceId: WorkspaceId, data: NewPipeline, limits: ServiceQuotaLimits, now = new Date()): Promise<CreatePipelineResult> {
      return db.$transaction(async (tx) => {
        await lockWorkspaceQuota(tx, 'pipelines', workspaceId);
        const usage = await countUsage(tx, workspaceId);
        const refused = createRefusal(usage, limits, data.schedule ?? null);
        if (refused) return refused;
        const pipeline = await tx.pipeline.create({
          data: {
            workspaceId,
            name: data.name,
            sourceConnector: data.sourceConnector,
            sourceConfig: data.sourceConfig as Prisma.InputJsonObject,
            destinationConnector: data.destinationConnector,
            destinationConfig: data.destinationConfig as Prisma.InputJsonObject,
            createdAt: now,
            concurrencyPolicy: data.concurrencyPolicy,
            runTimeoutSeconds: data.runTimeoutSeconds,
            ...scheduleColumns(data.schedule ?? null, 'active', now),
          },
        });
        return { kind: 'created', pipeline };
      });
    },

    /** What the workspace holds of the pipelines' quotas. */
    usage(workspaceId: WorkspaceId): Promise<PipelinesUsage> {
      return countUsage(db, workspaceId);
    },

    find(workspaceId: WorkspaceId, id: string): Promise<Pipeline | null> {
      return db.pipeline.findFirst({ where: { id, workspaceId } });
    },

    /** The workspace's pipelines, oldest first (the platform's list order), optionally of one status. */
    list(workspaceId: WorkspaceId, filter: { status?: PipelineStatus; after?: Cursor; take: number }): Promise<Pipeline[]> {
      return db.pipeline.findMany({
        where: { workspaceId, ...(filter.status ? { status: filter.status } : {}), ...afterCursor(filter.after) },
        orderBy: [...LIST_ORDER],
        take: filter.take,
      });
    },

    /**
     * Renames and/or sets the schedule (null removes it). Setting a schedule, even the same one,
     * moves its anchor to `now`: the next tick is computed from now. A schedule set on a pipeline
     * that had none is refused (nothing changes) when the workspace already holds
     * `limits.scheduled_pipelines` scheduled pipelines. Null when the pipeline is unknown.
     */
    async update(
      workspaceId: WorkspaceId,
      id: string,
      changes: PipelineChanges,
      limits: ServiceQuotaLimits,
      now = new Date(),
    ): Promise<UpdatePipelineResult | null> {
      return db.$transaction(async (tx) => {
        // The quota lock before the row lock, in the order a create takes it.
        if (setsSchedule(changes)) await lockWorkspaceQuota(tx, 'pipelines', workspaceId);
        const pipeline = await lock(tx, workspaceId, id);
        if (!pipeline) return null;
        if (addsSchedule(pipeline, changes)) {
          const refused = updateRefusal(await countUsage(tx, workspaceId), limits);
          if (refused) return refused;
        }
        const updated = await tx.pipeline.update({
          where: { id },
          data: {
            ...(changes.name !== undefined && { name: changes.name }),
            ...(changes.concurrencyPolicy !== undefined && { concurrencyPolicy: changes.concurrencyPolicy }),
            ...(changes.runTimeoutSeconds !== undefined && { runTimeoutSeconds: changes.runTimeoutSeconds }),
            ...(changes.schedule !== undefined && scheduleColumns(changes.schedule, pipeline.status, now)),
          },
        });
        return { kind: 'updated', pipeline: updated };
      });
    },

    /** Pauses or resumes, as statusChange decides on the locked row (a no-op for the status it has). Null when the pipeline is unknown. */
    async setStatus(workspaceId: WorkspaceId, id: string, status: PipelineStatus, now = new Date()): Promise<Pipeline | null> {
      return db.$transaction(async (tx) => {
        const pipeline = await lock(tx, workspaceId, id);
        const change = pipeline && statusChange(pipeline, status, now);
        if (!change) return pipeline;
        return tx.pipeline.update({ where: { id }, data: change });
      });
    },
  });
}
export type PipelinesStore = ReturnType<typeof pipelinesStore>;

/** The pipelines API's stores over one client: what its app is given instead of the client. */
export function pipelinesServiceStores(db: Database) {
  return {
    pipelines: pipelinesStore(db),
    runs: runsStore(db),
    runLogs: runLogsStore(db),
    runSeries: runSeriesStore(db),
    webhooks: webhooksStore(db),
    ping: () => db.$queryRaw`SELECT 1`,
  };
}
export type PipelinesServiceStores = ReturnType<typeof pipelinesServiceStores>;
