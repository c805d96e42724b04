import { notFound, quotaExceeded, type ApiError, type Cursor, type QuotaReached, type ServiceQuotaLimits, type WorkspaceId } from '@platform/core';
import type { NewPipeline, Pipeline, PipelineChanges, PipelinesStore, PipelineStatus } from './pipelines.store';

/** 409 quota_exceeded: on the whole body for the pipelines quota, on `schedule` for the scheduled pipelines quota. */
function pipelineQuotaExceeded({ quota, limit }: QuotaReached): ApiError {
  return quotaExceeded(quota, limit, quota === 'scheduled_pipelines' ? 'schedule' : '');
}

/** Creates a pipeline within the workspace's quotas (contract section 20): 409 quota_exceeded when it would pass one. */
export async function createPipeline(store: PipelinesStore, workspaceId: WorkspaceId, input: NewPipeline, quotas: ServiceQuotaLimits): Promise<Pipeline> {
  const result = await store.create(workspaceId, input, quotas);
  if (result.kind === 'quota_reached') throw pipelineQuotaExceeded(result);
  return result.pipeline;
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

/**
 * PATCH: renames and/or sets the schedule (null removes it; a set schedule counts its ticks from
 * now). A schedule set on a pipeline that had none counts against the scheduled pipelines quota.
 */
export async function updatePipeline(
  store: PipelinesStore,
  workspaceId: WorkspaceId,
  id: string,
  changes: PipelineChanges,
  quotas: ServiceQuotaLimits,
): Promise<Pipeline> {
  const result = await store.update(workspaceId, id, changes, quotas);
  if (!result) throw notFound('Pipeline');
  if (result.kind === 'quota_reached') throw pipelineQuotaExceeded(result);
  return result.pipeline;
}
