import { invalidRequest, type Logger, notFound, pageOf, timestamp } from '@platform/core';
import type { ApiKey, KeysStore, Workspace } from './keys.store';
import type { RevocationPublisher } from './revocations';
import { generateToken, hashToken, tokenPrefix } from './tokens';

export function renderWorkspace(workspace: Workspace) {
  return { id: workspace.id, name: workspace.name, created_at: timestamp(workspace.createdAt) };
}

/** An API key as the admin API shows it; `token` only on the answer that created it. */
export function renderApiKey(key: ApiKey, token?: string) {
  return {
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    ...(token === undefined ? {} : { token }),
    token_prefix: key.tokenPrefix,
    created_at: timestamp(key.createdAt),
    expires_at: timestamp(key.expiresAt),
    revoked_at: timestamp(key.revokedAt),
    last_used_at: timestamp(key.lastUsedAt),
  };
}

export async function getWorkspace(store: KeysStore, id: string): Promise<Workspace> {
  const workspace = await store.findWorkspace(id);
  if (!workspace) throw notFound('Workspace');
  return workspace;
}

export interface NewApiKey {
  name: string;
  /** null = unrestricted. */
  scopes: readonly string[] | null;
  expiresAt: Date | null;
}

/** Creates a key; the token exists only in this return value, the database keeps its SHA-256. */
export async function createApiKey(store: KeysStore, workspaceId: string, input: NewApiKey, now = new Date()): Promise<{ key: ApiKey; token: string }> {
  if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
    throw invalidRequest([{ in: 'body', field: 'expires_at', code: 'not_in_future', message: 'must be in the future' }]);
  }
  await getWorkspace(store, workspaceId);
  const token = generateToken();
  const key = await store.createApiKey(workspaceId, {
    name: input.name,
    scopes: input.scopes === null ? null : [...new Set(input.scopes)],
    tokenHash: hashToken(token),
    tokenPrefix: tokenPrefix(token),
    expiresAt: input.expiresAt,
  });
  return { key, token };
}

/**
 * Revokes a key and announces it to every gateway instance. The database is the truth: when the
 * announcement cannot be sent, instances still drop the key when its cache entry expires.
 */
export async function revokeApiKey(
  store: KeysStore,
  publisher: RevocationPublisher,
  workspaceId: string,
  keyId: string,
  logger?: Pick<Logger, 'warn'>,
): Promise<{ key: ApiKey; announced: boolean }> {
  const key = await store.revokeApiKey(workspaceId, keyId, new Date());
  if (!key) throw notFound('API key');
  try {
    await publisher.publish({ key_id: key.id, token_hash: key.tokenHash });
    return { key, announced: true };
  } catch (err) {
    logger?.warn({ err, key_id: key.id }, 'revocation saved but not announced; instances drop the key when their cache entry expires');
    return { key, announced: false };
  }
}

export const DEMO_WORKSPACE_NAME = 'Demo';

/** The "Demo" workspace (created once) and a fresh unrestricted key for it. */
export async function demoSeed(store: KeysStore): Promise<{ workspace_id: string; token: string }> {
  const workspace = await store.findOrCreateWorkspaceByName(DEMO_WORKSPACE_NAME);
  const { token } = await createApiKey(store, workspace.id, { name: `demo ${new Date().toISOString()}`, scopes: null, expiresAt: null });
  return { workspace_id: workspace.id, token };
}

export function createWorkspace(store: KeysStore, name: string): Promise<Workspace> {
  return store.createWorkspace(name);
}

export async function listWorkspaces(store: KeysStore, query: { limit: number; cursor?: string }) {
  return pageOf(query, (page) => store.listWorkspaces(page), renderWorkspace);
}

/** Every key of the workspace, revoked ones too; never a token. */
export async function listApiKeys(store: KeysStore, workspaceId: string, query: { limit: number; cursor?: string }) {
  await getWorkspace(store, workspaceId);
  return pageOf(
    query,
    (page) => store.listApiKeys(workspaceId, page),
    (key) => renderApiKey(key),
  );
}
