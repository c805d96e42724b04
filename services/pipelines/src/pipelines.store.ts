import { workspaceScoped, type WorkspaceId } from '@platform/core';
import type { Database } from './database';
import type { Pipeline, PipelineStatus, Prisma } from './generated/prisma/client';

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
