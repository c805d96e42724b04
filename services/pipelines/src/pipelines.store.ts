import { workspaceScoped, type WorkspaceId } from '@platform/core';
import { webhooksStore } from '@platform/webhooks';
import type { Database } from './database';
import type { Pipeline, PipelineStatus, Prisma } from './generated/prisma/client';
import { runsStore } from './runs.store';
import { runLogsStore } from './run-logs';

export type { Pipeline, PipelineStatus };

export interface NewPipeline {
  name: string;
  sourceConnector: string;
  sourceConfig: Record<string, unknown>;
  destinationConnector: string;
  destinationConfig: Record<string, unknown>;
}

/** Pipeline queries; each takes the workspace, so no query can forget it. */
export function pipelinesStore(db: Database) {
  return workspaceScoped({
    create(workspaceId: WorkspaceId, data: NewPipeline): Promise<Pipeline> {
      return db.pipeline.create({
        data: {
          workspaceId,
          name: data.name,
          sourceConnector: data.sourceConnector,
          sourceConfig: data.sourceConfig as Prisma.InputJsonObject,
          destinationConnector: data.destinationConnector,
          destinationConfig: data.destinationConfig as Prisma.InputJsonObject,
        },
      });
    },

    find(workspaceId: WorkspaceId, id: string): Promise<Pipeline | null> {
      return db.pipeline.findFirst({ where: { id, workspaceId } });
    },

    /** One UPDATE: setting the status it already has is a no-op. Null when the pipeline is unknown. */
    async setStatus(workspaceId: WorkspaceId, id: string, status: PipelineStatus): Promise<Pipeline | null> {
      await db.pipeline.updateMany({ where: { id, workspaceId }, data: { status } });
      return db.pipeline.findFirst({ where: { id, workspaceId } });
    },
  });
}
export type PipelinesStore = ReturnType<typeof pipelinesStore>;

/** The pipelines API's stores over one client: what its app is given instead of the client. */
export function pipelinesServiceStores(db: Database) {
  return { pipelines: pipelinesStore(db), runs: runsStore(db), runLogs: runLogsStore(db), webhooks: webhooksStore(db), ping: () => db.$queryRaw`SELECT 1` };
}
export type PipelinesServiceStores = ReturnType<typeof pipelinesServiceStores>;
