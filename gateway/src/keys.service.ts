import { conflict, invalidRequest, type Logger, notFound, pageOf, quotaExceeded, type WorkspaceId } from '@platform/core';
import type { ApiKey, CrossWorkspaceKeysStore, GatewayStores, KeysStore, RateLimits, UsageGranularity, Workspace } from './keys.store';
import type { KeyChangePublisher } from './key-changes';
import { renderApiKey, renderUsageBucket, renderWorkspace } from './keys.render';
import { generateToken, hashToken, tokenPrefix } from './tokens';

export async function getWorkspace(store: KeysStore, id: WorkspaceId): Promise<Workspace> {
  const workspace = await store.findWorkspace(id);
  if (!workspace) throw notFound('Workspace');
  return workspace;
}

export interface NewApiKey {
  name: string;
  /** null = unrestricted. */
  scopes: readonly string[] | null;
  expiresAt: Date | null;
  /** null = the platform's limits. */
  rateLimits: RateLimits | null;
}

/**
 * Creates a key while the workspace holds fewer than `maxKeys` (GATEWAY_WORKSPACE_MAX_API_KEYS;
 * keys.limit.ts says which it holds): 409 quota_exceeded (`quota: "api_keys"`) when it holds that
 * many, nothing written. `maxKeys` null: not counted (`demoSeed`). The token exists only in this
 * return value, the database keeps its SHA-256.
 */
export async function createApiKey(
  store: KeysStore,
  workspaceId: WorkspaceId,
  input: NewApiKey,
  maxKeys: number | null,
  now = new Date(),
): Promise<{ key: ApiKey; token: string }> {
  if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
    throw invalidRequest([{ in: 'body', field: 'expires_at', code: 'not_in_future', message: 'must be in the future' }]);
  }
  await getWorkspace(store, workspaceId);
  const token = generateToken();
  const row = {
    name: input.name,
    scopes: input.scopes,
    tokenHash: hashToken(token),
    tokenPrefix: tokenPrefix(token),
    expiresAt: input.expiresAt,
    rateLimits: input.rateLimits,
  };
  const created = await store.createApiKey(workspaceId, row, maxKeys, now);
  if (created.kind === 'quota_reached') throw quotaExceeded(created.quota, created.limit);
  return { key: created.key, token };
}

/**
 * Where a saved key change is told: every gateway instance through Redis, and the key cache of the
 * instance that made it, which drops the keys at once. A change made outside a gateway (a script,
 * the CLI's database commands) has no cache of its own.
 */
export interface KeyChangeTargets {
  publisher: KeyChangePublisher;
  /** This instance's key cache (key-cache.ts). */
  cache?: { evict(tokenHash: string): void };
  logger?: Pick<Logger, 'warn'>;
}

/**
 * Tells every gateway instance at once to drop these keys from its cache (each reads a key again on
 * its next request), and drops them from this instance's cache. Publishing is only the fast path:
 * the store logged the change in its own transaction, and every instance reads that log within
 * GATEWAY_KEY_CHANGES_POLL_MS, so a lost announcement costs nothing.
 */
export async function announceKeyChanges(targets: KeyChangeTargets, keys: readonly Pick<ApiKey, 'id' | 'tokenHash'>[]): Promise<boolean> {
  const published = await Promise.allSettled(keys.map((key) => targets.publisher.publish({ key_id: key.id, token_hash: key.tokenHash })));
  for (const key of keys) targets.cache?.evict(key.tokenHash);
  const failed = keys.filter((_key, i) => published[i]!.status === 'rejected');
  if (failed.length === 0) return true;
  const err = (published.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason as unknown;
  // One line for the whole change, however many keys it touched.
  targets.logger?.warn(
    { err, key_id: failed[0]!.id, keys_not_announced: failed.length },
    'key change saved but not announced on Redis; instances apply it from the key-change log',
  );
  return false;
}

const announceKeyChange = (targets: KeyChangeTargets, key: ApiKey): Promise<boolean> => announceKeyChanges(targets, [key]);

export interface ApiKeyChange {
  name?: string;
  /** null = unrestricted. */
  scopes?: readonly string[] | null;
  /** null = the platform's limits; replaces the whole map. */
  rateLimits?: RateLimits | null;
}

/** Changes a key's name, scopes or limits (the fields given) and announces it (`announceKeyChanges`). */
export async function updateApiKey(
  store: KeysStore,
  targets: KeyChangeTargets,
  workspaceId: WorkspaceId,
  keyId: string,
  change: ApiKeyChange,
): Promise<{ key: ApiKey; announced: boolean }> {
  const key = await store.updateApiKey(workspaceId, keyId, {
    name: change.name,
    scopes: change.scopes,
    rateLimits: change.rateLimits,
  });
  if (!key) throw notFound('API key');
  return { key, announced: await announceKeyChange(targets, key) };
}

/**
 * Rolls a key: a new token with the old key's name, scopes and limits, and the old token working
 * for `overlapSeconds` more (never longer than it already would). 409 for a revoked or expired key.
 * The new key replaces the old one, so the roll never counts against `maxKeys`, except a second roll
 * of one key, which adds a key: 409 quota_exceeded when the workspace holds `maxKeys` already.
 */
export async function rollApiKey(
  store: KeysStore,
  targets: KeyChangeTargets,
  workspaceId: WorkspaceId,
  keyId: string,
  overlapSeconds: number,
  maxKeys: number,
  now = new Date(),
): Promise<{ key: ApiKey; token: string; old: ApiKey; announced: boolean }> {
  const token = generateToken();
  const rolled = await store.rollApiKey(
    workspaceId,
    keyId,
    now,
    new Date(now.getTime() + overlapSeconds * 1000),
    { tokenHash: hashToken(token), tokenPrefix: tokenPrefix(token) },
    maxKeys,
  );
  if (rolled.outcome === 'not_found') throw notFound('API key');
  if (rolled.outcome === 'conflict') {
    throw conflict(rolled.key.revokedAt ? 'A revoked API key cannot be rolled.' : 'An expired API key cannot be rolled.');
  }
  if (rolled.outcome === 'limit_reached') throw quotaExceeded('api_keys', rolled.limit);
  return { key: rolled.key, token, old: rolled.old, announced: await announceKeyChange(targets, rolled.old) };
}

const HOUR_MS = 3_600_000;
const DEFAULT_USAGE_WINDOW_MS = 24 * HOUR_MS;
/** The widest range one usage answer covers: at most 744 hourly or 366 daily buckets. */
export const MAX_USAGE_RANGE_MS: Record<UsageGranularity, number> = { hour: 31 * 24 * HOUR_MS, day: 366 * 24 * HOUR_MS };

/** A key's requests per UTC hour or day whose start is in [from, to) (default: the last 24 hours by hour), buckets with traffic only. */
export async function keyUsage(
  store: KeysStore,
  workspaceId: WorkspaceId,
  keyId: string,
  query: { from?: Date; to?: Date; granularity: UsageGranularity },
  now = new Date(),
) {
  const to = query.to ?? now;
  const from = query.from ?? new Date(to.getTime() - DEFAULT_USAGE_WINDOW_MS);
  if (from.getTime() >= to.getTime()) {
    throw invalidRequest([{ in: 'query', field: 'from', code: 'not_before_to', message: 'must be before to' }]);
  }
  if (to.getTime() - from.getTime() > MAX_USAGE_RANGE_MS[query.granularity]) {
    const most = query.granularity === 'hour' ? '31 days with granularity=hour' : '366 days with granularity=day';
    throw invalidRequest([{ in: 'query', field: 'from', code: 'range_too_large', message: `at most ${most} before to` }]);
  }
  await getApiKey(store, workspaceId, keyId);
  const buckets = await store.keyUsage(workspaceId, keyId, { from, to, granularity: query.granularity });
  return { data: buckets.map(renderUsageBucket) };
}

/** A key of the workspace, whatever its state; 404 when the workspace has no such key. */
export async function getApiKey(store: KeysStore, workspaceId: WorkspaceId, keyId: string): Promise<ApiKey> {
  const key = await store.findApiKey(workspaceId, keyId);
  if (!key) throw notFound('API key');
  return key;
}

/** Revokes a key and announces it (`announceKeyChanges`). */
export async function revokeApiKey(
  store: KeysStore,
  targets: KeyChangeTargets,
  workspaceId: WorkspaceId,
  keyId: string,
): Promise<{ key: ApiKey; announced: boolean }> {
  const key = await store.revokeApiKey(workspaceId, keyId, new Date());
  if (!key) throw notFound('API key');
  return { key, announced: await announceKeyChange(targets, key) };
}

export const DEMO_WORKSPACE_NAME = 'Demo';

/**
 * The "Demo" workspace (created once) and a fresh unrestricted key for it. Not counted against the
 * API keys limit: `npm start` runs it on every start, and a clone started a thousand times must
 * still start (the admin API refuses further creates in a workspace past its limit).
 */
export async function demoSeed(stores: GatewayStores): Promise<{ workspace_id: string; token: string }> {
  const workspace = await stores.crossWorkspace.findOrCreateWorkspaceByName(DEMO_WORKSPACE_NAME);
  const { token } = await createApiKey(
    stores.keys,
    workspace.id,
    { name: `demo ${new Date().toISOString()}`, scopes: null, expiresAt: null, rateLimits: null },
    null,
  );
  return { workspace_id: workspace.id, token };
}

export function createWorkspace(store: CrossWorkspaceKeysStore, name: string): Promise<Workspace> {
  return store.createWorkspace(name);
}

export async function listWorkspaces(store: CrossWorkspaceKeysStore, query: { limit: number; cursor?: string }) {
  return pageOf(query, (page) => store.listWorkspaces(page), renderWorkspace);
}

/** Every key of the workspace, revoked ones too; never a token. */
export async function listApiKeys(store: KeysStore, workspaceId: WorkspaceId, query: { limit: number; cursor?: string }) {
  await getWorkspace(store, workspaceId);
  return pageOf(
    query,
    (page) => store.listApiKeys(workspaceId, page),
    (key) => renderApiKey(key),
  );
}
