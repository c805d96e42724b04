import { notFound, type Cursor, type WorkspaceId } from '@platform/core';
import type { NewPipeline, Pipeline, PipelineChanges, PipelinesStore, PipelineStatus } from './pipelines.store';

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

/** The workspace's pipelines, oldest first, optionally of one status. */
export async function listPipelines(
  store: PipelinesStore,
  workspaceId: WorkspaceId,
  filter: { status?: PipelineStatus; after?: Cursor; take: number },
): Promise<Pipeline[]> {
  return store.list(workspaceId, filter);
}

/** PATCH: renames and/or sets the schedule (null removes it; a set schedule counts its ticks from now). */
export async function updatePipeline(store: PipelinesStore, workspaceId: WorkspaceId, id: string, changes: PipelineChanges): Promise<Pipeline> {
  const pipeline = await store.update(workspaceId, id, changes);
  if (!pipeline) throw notFound('Pipeline');
  return pipeline;
}
