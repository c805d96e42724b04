// The tab's session. The admin token and the session key live only in this module's variables:
// never in localStorage, sessionStorage, a cookie or a URL. Reloading the tab forgets them.
import {
  admin,
  PlatformApiError,
  platformClient,
  unwrap,
  type FetchResult,
  type Meta,
  type Page,
  type PlatformClient,
  type Scope,
  type Workspace,
} from './api.js';

export const SESSION_KEY_NAME = 'console session';
/** Short-lived: if the tab dies without revoking it, the key stops working on its own. */
export const SESSION_KEY_TTL_MS = 60 * 60 * 1000;
/** A key this close to its expiry is replaced before the next call. */
const RENEW_BEFORE_MS = 5 * 60 * 1000;
/** The resources the console manages through the services' public API. */
const SESSION_RESOURCES = ['items', 'stock', 'pipelines', 'runs', 'webhooks'];
/** Events are only read, tickets read and their validations undone: no events:write. */
const SESSION_EXTRA_SCOPES = ['events:read', 'tickets:read', 'tickets:write'];

interface SessionKey {
  id: string;
  expiresAt: number;
  /** The services' client with this key. */
  platform: PlatformClient;
}

let meta: Meta | null = null;
let adminToken: string | null = null;
let workspace: Workspace | null = null;
let sessionKey: SessionKey | null = null;
let renewing: Promise<SessionKey> | null = null;

export function setMeta(value: Meta): void {
  meta = value;
}

export function getMeta(): Meta {
  if (!meta) throw new Error('console settings not loaded');
  return meta;
}

/** events:read, tickets:*, items:*, stock:write, pipelines:*, runs:*, webhooks:*, in the order of the contract's scopes. */
export function sessionScopes(): Scope[] {
  return getMeta().scopes.filter((scope) => SESSION_RESOURCES.includes(scope.split(':')[0]!) || SESSION_EXTRA_SCOPES.includes(scope));
}

export function requireAdminToken(): string {
  if (adminToken === null) throw new Error('Signed out: sign in again.');
  return adminToken;
}

export const signedIn = (): boolean => adminToken !== null;

/** The open workspace's id, or null when none is open. */
export const openWorkspaceId = (): string | null => workspace?.id ?? null;

export function currentWorkspace(): Workspace {
  if (!workspace) throw new Error('No workspace chosen.');
  return workspace;
}

export function sessionKeyId(): string | null {
  return sessionKey?.id ?? null;
}

/** Checks the token with a real admin call and keeps it; resolves with the first workspaces. */
export async function signIn(token: string): Promise<Page<Workspace>> {
  const page = await admin.listWorkspaces(token);
  adminToken = token;
  return page;
}

async function createSessionKey(): Promise<SessionKey> {
  const token = requireAdminToken();
  const chosen = currentWorkspace();
  const expiresAt = Date.now() + SESSION_KEY_TTL_MS;
  const created = await admin.createKey(token, chosen.id, { name: SESSION_KEY_NAME, scopes: sessionScopes(), expires_at: new Date(expiresAt).toISOString() });
  if (workspace !== chosen) {
    // Left while the key was being made: nothing may hold it, so it is revoked at once.
    await revokeQuietly(token, chosen.id, created.id);
    throw new Error('The workspace was left.');
  }
  sessionKey = { id: created.id, expiresAt, platform: platformClient(created.token) };
  return sessionKey;
}

/**
 * Replaces `stale` (expiring, or revoked from the key list); one renewal at a time, and a call
 * that failed with a key already replaced just takes the new one.
 */
function renewSessionKey(stale: SessionKey | null): Promise<SessionKey> {
  if (renewing) return renewing;
  if (sessionKey && sessionKey !== stale) return Promise.resolve(sessionKey);
  renewing = (async () => {
    sessionKey = null;
    try {
      if (stale) await revokeQuietly(adminToken, currentWorkspace().id, stale.id);
      return await createSessionKey();
    } finally {
      renewing = null;
    }
  })();
  return renewing;
}

async function revokeQuietly(token: string | null, workspaceId: string, keyId: string, keepalive = false): Promise<void> {
  if (token === null) return;
  try {
    await admin.revokeKey(token, workspaceId, keyId, keepalive);
  } catch {
    // Already revoked or gone; it expires within the hour anyway.
  }
}

/** Chooses a workspace: a fresh session key for the service calls, the previous one revoked. */
export async function openWorkspace(next: Workspace): Promise<void> {
  await closeWorkspace();
  workspace = next;
  try {
    await createSessionKey();
  } catch (err) {
    workspace = null;
    throw err;
  }
}

/** Revokes the session key and forgets the workspace. */
export async function closeWorkspace(): Promise<void> {
  const key = sessionKey;
  const left = workspace;
  sessionKey = null;
  // Forgotten before the revocation is awaited, so a call meanwhile cannot make a new key for it.
  workspace = null;
  if (key && left) await revokeQuietly(adminToken, left.id, key.id);
}

/** Revokes the session key and forgets the admin token. */
export async function signOut(): Promise<void> {
  await closeWorkspace();
  adminToken = null;
}

/**
 * The tab is going away: ask the gateway to revoke the session key with a request that outlives
 * the page (fetch keepalive can carry the Authorization header; sendBeacon cannot).
 */
export function revokeOnPageHide(): void {
  if (sessionKey && workspace) void revokeQuietly(adminToken, workspace.id, sessionKey.id, true);
}

/**
 * A call to a service through the gateway's public API with the session key's client, e.g.
 * `gateway((platform) => platform.events.GET('/events/{id}', { params: { path: { id } } }))`:
 * resolves with the answer's body, rejects with PlatformApiError. A key near its expiry is
 * replaced first, and a 401 (expired or revoked meanwhile) is sent once more with a new key.
 */
export async function gateway<T>(send: (platform: PlatformClient) => Promise<FetchResult<T>>): Promise<T> {
  let key = renewing ? await renewing : sessionKey;
  if (!key || key.expiresAt - Date.now() < RENEW_BEFORE_MS) key = await renewSessionKey(key);
  try {
    return await unwrap(send(key.platform));
  } catch (err) {
    if (!(err instanceof PlatformApiError) || err.status !== 401) throw err;
    return unwrap(send((await renewSessionKey(key)).platform));
  }
}
