import type { WorkspaceQuotas } from '@platform/admin-api';
import { notFound, QUOTA_NAMES, type QuotaLimits, type WorkspaceId } from '@platform/core';
import { announceKeyChanges, type KeyChangeTargets } from './keys.service';
import type { KeysStore } from './keys.store';
import type { ChangedKey, QuotaSettings } from './quotas.store';

/** What a workspace uses now, in the answer's shape: `webhook_endpoints` per service. */
export type WorkspaceUsage = WorkspaceQuotas['usage'];

/** Reads a workspace's usage from the services (service-usage.ts); rejects with the contract's 503 when one does not give it. */
export type ReadWorkspaceUsage = (workspaceId: string, requestId: string) => Promise<WorkspaceUsage>;

export interface QuotasContext {
  store: KeysStore;
  /** The platform defaults (WORKSPACE_QUOTA_*). */
  defaults: QuotaLimits;
  readUsage: ReadWorkspaceUsage;
}

/** The limits in force: the value set for the workspace, else the platform default. */
export function resolveQuotas(settings: QuotaSettings, defaults: QuotaLimits): QuotaLimits {
  return Object.fromEntries(QUOTA_NAMES.map((name) => [name, settings[name] ?? defaults[name]])) as QuotaLimits;
}

export function renderWorkspaceQuotas(settings: QuotaSettings, defaults: QuotaLimits, usage: WorkspaceUsage): WorkspaceQuotas {
  return {
    pipelines: settings.pipelines,
    scheduled_pipelines: settings.scheduled_pipelines,
    webhook_endpoints: settings.webhook_endpoints,
    idempotency_bytes: settings.idempotency_bytes,
    limits: resolveQuotas(settings, defaults),
    usage,
  };
}

async function settingsOf(store: KeysStore, workspaceId: WorkspaceId): Promise<QuotaSettings> {
  const settings = await store.findWorkspaceQuotas(workspaceId);
  if (!settings) throw notFound('Workspace');
  return settings;
}

/** A workspace's quotas: the values set, the limits in force and its usage. 404 for an unknown workspace. */
export async function getWorkspaceQuotas(ctx: QuotasContext, workspaceId: WorkspaceId, requestId: string): Promise<WorkspaceQuotas> {
  const settings = await settingsOf(ctx.store, workspaceId);
  return renderWorkspaceQuotas(settings, ctx.defaults, await ctx.readUsage(workspaceId, requestId));
}

/**
 * Changes the quotas named (null: back to the default) and announces every key of the workspace to
 * every gateway instance, which re-read them with the new limits. The usage is read first: when a
 * service does not give it (503), nothing has changed.
 */
export async function updateWorkspaceQuotas(
  ctx: QuotasContext,
  targets: KeyChangeTargets,
  workspaceId: WorkspaceId,
  change: Partial<QuotaSettings>,
  requestId: string,
): Promise<{ quotas: WorkspaceQuotas; keys: ChangedKey[] }> {
  await settingsOf(ctx.store, workspaceId);
  const usage = await ctx.readUsage(workspaceId, requestId);
  const updated = await ctx.store.updateWorkspaceQuotas(workspaceId, change);
  if (!updated) throw notFound('Workspace');
  await announceKeyChanges(targets, updated.keys);
  return { quotas: renderWorkspaceQuotas(updated.quotas, ctx.defaults, usage), keys: updated.keys };
}
