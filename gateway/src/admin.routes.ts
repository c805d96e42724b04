import { createHash, timingSafeEqual } from 'node:crypto';
import express, { Router, type Express, type Request, type RequestHandler } from 'express';
import type { z } from 'zod';
import {
  ApiError,
  errorHandler,
  jsonBody,
  notFoundHandler,
  parseRequest,
  pathEscapeErrors,
  platformHeaders,
  requestLog,
  unauthorized,
  type Logger,
} from '@platform/core';
import { AdminListQuery, ApiKeyParams, CreateApiKeyBody, CreateWorkspaceBody, WorkspaceParams } from './admin.schemas';
import type { KeyCache } from './key-cache';
import type { KeysStore } from './keys.store';
import {
  createApiKey,
  createWorkspace,
  getWorkspace,
  listApiKeys,
  listWorkspaces,
  renderApiKey,
  renderWorkspace,
  revokeApiKey,
} from './keys.service';
import { rateLimitHeaders, type Limiter, type Limits } from './rate-limiter';
import type { RevocationPublisher } from './revocations';
import { bearerToken } from './tokens';

export interface AdminDeps {
  store: KeysStore;
  keys: KeyCache;
  publisher: RevocationPublisher;
  limiter: Limiter;
  limits: Limits;
  adminToken: string;
  logger: Logger;
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
    if (!ipLimit.allowed) throw new ApiError(429, 'rate_limited', 'Rate limit exceeded; retry after the time in Retry-After.');
    throw unauthorized('Missing or invalid admin token.');
  };
}

interface Schemas {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
}
type Parsed<T> = T extends z.ZodType ? z.output<T> : undefined;

/** Validates params, query and body at once, after the string rule (core's parseRequest: every problem in one 400), before the handler runs. */
function validated<S extends Schemas>(schemas: S, handle: (input: { params: Parsed<S['params']>; query: Parsed<S['query']>; body: Parsed<S['body']> }, req: Request) => Promise<{ status: number; body?: unknown }>): RequestHandler {
  return async (req, res) => {
    const input = parseRequest(schemas, req);
    const reply = await handle(input, req);
    if (reply.body === undefined) res.status(reply.status).end();
    else res.status(reply.status).json(reply.body);
  };
}

/** The workspace settings API (contract section 3). */
export function adminRoutes(deps: AdminDeps): Router {
  const { store } = deps;
  const router = Router();

  router.post(
    '/workspaces',
    validated({ body: CreateWorkspaceBody }, async ({ body }) => ({ status: 201, body: renderWorkspace(await createWorkspace(store, body.name)) })),
  );

  router.get('/workspaces', validated({ query: AdminListQuery }, async ({ query }) => ({ status: 200, body: await listWorkspaces(store, query) })));

  router.get(
    '/workspaces/:id',
    validated({ params: WorkspaceParams }, async ({ params }) => ({ status: 200, body: renderWorkspace(await getWorkspace(store, params.id)) })),
  );

  router.post(
    '/workspaces/:id/api-keys',
    validated({ params: WorkspaceParams, body: CreateApiKeyBody }, async ({ params, body }) => {
      const { key, token } = await createApiKey(store, params.id, { name: body.name, scopes: body.scopes ?? null, expiresAt: body.expires_at ?? null });
      return { status: 201, body: renderApiKey(key, token) };
    }),
  );

  router.get(
    '/workspaces/:id/api-keys',
    validated({ params: WorkspaceParams, query: AdminListQuery }, async ({ params, query }) => ({ status: 200, body: await listApiKeys(store, params.id, query) })),
  );

  router.delete(
    '/workspaces/:id/api-keys/:key_id',
    validated({ params: ApiKeyParams }, async ({ params }) => {
      const { key } = await revokeApiKey(store, deps.publisher, params.id, params.key_id, deps.logger);
      // This instance drops the key at once; the others on the published message.
      deps.keys.evict(key.tokenHash);
      return { status: 204 };
    }),
  );

  router.use(pathEscapeErrors(['/workspaces/:id', '/workspaces/:id/api-keys', '/workspaces/:id/api-keys/:key_id']));
  return router;
}

/** The Express app the hot path hands /admin/v1 to. */
export function createAdminApp(deps: AdminDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(platformHeaders());
  app.use(requestLog(deps.logger));
  app.use('/admin/v1', requireAdminToken(deps), jsonBody(), adminRoutes(deps));
  app.use(notFoundHandler());
  app.use(errorHandler(deps.logger));
  return app;
}
