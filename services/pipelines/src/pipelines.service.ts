import { notFound, type WorkspaceId } from '@platform/core';
import type { NewPipeline, Pipeline, PipelinesStore, PipelineStatus } from './pipelines.store';

export async function createPipeline(store: PipelinesStore, workspaceId: WorkspaceId, input: NewPipeline): Promise<Pipeline> {
  return store.create(workspaceId, input);
}

export async function getPipeline(store: PipelinesStore, workspaceId: WorkspaceId, id: string): Promise<Pipeline> {
  const pipeline = await store.find(workspaceId, id);
  if (!pipeline) throw notFound('Pipeline');
  return pipeline;
}

/**
 * Pauses or resumes; pausing a paused pipeline (or resuming an active one) is a no-op. A pause
 * refuses new runs; a run already queued or running goes on (cancel it to stop it).
 */
export async function setPipelineStatus(store: PipelinesStore, workspaceId: WorkspaceId, id: string, status: PipelineStatus): Promise<Pipeline> {
  const pipeline = await store.setStatus(workspaceId, id, status);
  if (!pipeline) throw notFound('Pipeline');
  return pipeline;
}
