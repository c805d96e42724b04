import { createHash, timingSafeEqual } from 'node:crypto';
import { Router, type Express, type RequestHandler } from 'express';
import {
  ADMIN_PREFIX,
  ADMIN_ROUTES,
  createJsonApiApp,
  mountRouteTable,
  rateLimited,
  route,
  unauthorized,
  type AdminRouteKey,
  type Logger,
  type QuotaLimits,
  type RouteDefinition,
  type WorkspaceId,
} from '@platform/core';
import { ADMIN_ROUTE_SCHEMAS as SCHEMAS } from '@platform/admin-api';
import type { KeyCache } from './key-cache';
import type { GatewayStores } from './keys.store';
import {
  createApiKey,
  createWorkspace,
  getApiKey,
  getWorkspace,
  keyUsage,
  listApiKeys,
  listWorkspaces,
  revokeApiKey,
  rollApiKey,
  updateApiKey,
  type KeyChangeTargets,
} from './keys.service';
import { renderApiKey, renderWorkspace } from './keys.render';
import { rateLimitHeaders, type Limiter, type Limits } from './rate-limiter';
import type { KeyChangePublisher } from './key-changes';
import { getWorkspaceQuotas, updateWorkspaceQuotas, type ReadWorkspaceUsage } from './quotas.service';
import { bearerToken } from './tokens';

export interface AdminDeps {
  stores: GatewayStores;
  keys: KeyCache;
  publisher: KeyChangePublisher;
  limiter: Limiter;
  limits: Limits;
  adminToken: string;
  logger: Logger;
  /** The platform default quotas (WORKSPACE_QUOTA_*). */
  quotaDefaults: QuotaLimits;
  /** The API keys one workspace may hold (GATEWAY_WORKSPACE_MAX_API_KEYS). */
  maxApiKeys: number;
  /** A workspace's usage, asked of the services (service-usage.ts). */
  readUsage: ReadWorkspaceUsage;
}

const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * Only the admin token passes; any other (or none) is a failed authentication counted against
 * the client IP like the hot path's, 429 once over the limit.
 */
function requireAdminToken(deps: AdminDeps): RequestHandler {
  const expected = sha256(deps.adminToken);
  return async (req, res, next) => {
    const token = bearerToken(req.headers.authorization);
    // Hashing both sides first makes the comparison constant-time whatever the token's length.
    if (token !== undefined && timingSafeEqual(sha256(token), expected)) return next();
    const ipLimit = await deps.limiter.hit(`ip:${req.socket.remoteAddress ?? 'unknown'}:failed-auth`, deps.limits['failed-auth']);
    for (const [name, value] of Object.entries(rateLimitHeaders(ipLimit))) res.setHeader(name, value);
    if (!ipLimit.allowed) throw rateLimited();
    throw unauthorized('Missing or invalid admin token.');
  };
}

/** An admin route's handler learns nothing of its caller: the admin token stands for the operator, not a workspace. */
type AdminRouteDefinition = RouteDefinition<null>;

const admitAdmin = (): null => null;

/** The workspace an admin route acts on: the admin token may act on any, so the one named in the path is the scope of every query. */
const workspaceOf = (params: { id: string }): WorkspaceId => params.id as WorkspaceId;

/** The workspace settings API (contract sections 3, 16 and 20), one definition per route of `ADMIN_ROUTES`. */
export function adminRouteDefinitions(deps: AdminDeps): Record<AdminRouteKey, AdminRouteDefinition> {
  const { keys: store, crossWorkspace } = deps.stores;
  const quotas = { store, defaults: deps.quotaDefaults, readUsage: deps.readUsage };
  // A change is announced to every instance and dropped from this one's cache by the service.
  const targets: KeyChangeTargets = { publisher: deps.publisher, cache: deps.keys, logger: deps.logger };
  return {
    'POST /workspaces': route(SCHEMAS['POST /workspaces'], async ({ body }) => ({
      status: 201,
      body: renderWorkspace(await createWorkspace(crossWorkspace, body.name)),
    })),

    'GET /workspaces': route(SCHEMAS['GET /workspaces'], async ({ query }) => ({ status: 200, body: await listWorkspaces(crossWorkspace, query) })),

    'GET /workspaces/:id': route(SCHEMAS['GET /workspaces/:id'], async ({ params }) => ({
      status: 200,
      body: renderWorkspace(await getWorkspace(store, workspaceOf(params))),
    })),

    'POST /workspaces/:id/api-keys': route(SCHEMAS['POST /workspaces/:id/api-keys'], async ({ params, body }) => {
      const { key, token } = await createApiKey(
        store,
        workspaceOf(params),
        { name: body.name, scopes: body.scopes ?? null, expiresAt: body.expires_at ?? null, rateLimits: body.rate_limits ?? null },
        deps.maxApiKeys,
      );
      return { status: 201, body: renderApiKey(key, token) };
    }),

    'GET /workspaces/:id/api-keys': route(SCHEMAS['GET /workspaces/:id/api-keys'], async ({ params, query }) => ({
      status: 200,
      body: await listApiKeys(store, workspaceOf(params), query),
    })),

    'GET /workspaces/:id/api-keys/:key_id': route(SCHEMAS['GET /workspaces/:id/api-keys/:key_id'], async ({ params }) => ({
      status: 200,
      body: renderApiKey(await getApiKey(store, workspaceOf(params), params.key_id)),
    })),

    'DELETE /workspaces/:id/api-keys/:key_id': route(SCHEMAS['DELETE /workspaces/:id/api-keys/:key_id'], async ({ params }) => {
      await revokeApiKey(store, targets, workspaceOf(params), params.key_id);
      return { status: 204 };
    }),

    'PATCH /workspaces/:id/api-keys/:key_id': route(SCHEMAS['PATCH /workspaces/:id/api-keys/:key_id'], async ({ params, body }) => {
      const change = { name: body.name, scopes: body.scopes, rateLimits: body.rate_limits };
      const { key } = await updateApiKey(store, targets, workspaceOf(params), params.key_id, change);
      return { status: 200, body: renderApiKey(key) };
    }),

    'POST /workspaces/:id/api-keys/:key_id/roll': route(SCHEMAS['POST /workspaces/:id/api-keys/:key_id/roll'], async ({ params, body }) => {
      const { key, token } = await rollApiKey(store, targets, workspaceOf(params), params.key_id, body.expires_in_seconds, deps.maxApiKeys);
      return { status: 201, body: renderApiKey(key, token) };
    }),

    'GET /workspaces/:id/api-keys/:key_id/usage': route(SCHEMAS['GET /workspaces/:id/api-keys/:key_id/usage'], async ({ params, query }) => ({
      status: 200,
      body: await keyUsage(store, workspaceOf(params), params.key_id, query),
    })),

    'GET /workspaces/:id/quotas': route(SCHEMAS['GET /workspaces/:id/quotas'], async ({ params, requestId }) => ({
      status: 200,
      body: await getWorkspaceQuotas(quotas, workspaceOf(params), requestId),
    })),

    'PATCH /workspaces/:id/quotas': route(SCHEMAS['PATCH /workspaces/:id/quotas'], async ({ params, body, requestId }) => {
      const updated = await updateWorkspaceQuotas(quotas, targets, workspaceOf(params), body, requestId);
      return { status: 200, body: updated.quotas };
    }),
  };
}

/** A router with exactly the admin routes. */
export function adminRoutes(deps: AdminDeps): Router {
  return mountRouteTable(Router(), ADMIN_ROUTES, adminRouteDefinitions(deps), admitAdmin);
}

/** The Express app the hot path hands /admin/v1 to: the services' app, guarded by the admin token. */
export function createAdminApp(deps: AdminDeps): Express {
  return createJsonApiApp({ logger: deps.logger, guard: requireAdminToken(deps), path: ADMIN_PREFIX, routes: adminRoutes(deps) });
}
