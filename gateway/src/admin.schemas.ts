import { z } from 'zod';
import { codePointString, ListQuery, SCOPES, Timestamp, Uuid, type AdminRouteKey, type RouteSchemas } from '@platform/core';

export const WorkspaceParams = z.object({ id: Uuid });
export type WorkspaceParams = z.infer<typeof WorkspaceParams>;

export const ApiKeyParams = z.object({ id: Uuid, key_id: Uuid });
export type ApiKeyParams = z.infer<typeof ApiKeyParams>;

export const CreateWorkspaceBody = z.strictObject({ name: codePointString(1, 200) });
export type CreateWorkspaceBody = z.infer<typeof CreateWorkspaceBody>;

/** `scopes` omitted (or null) = unrestricted; otherwise a non-empty list of known scopes. */
export const CreateApiKeyBody = z.strictObject({
  name: codePointString(1, 200),
  scopes: z.array(z.enum(SCOPES)).min(1).nullable().optional(),
  expires_at: Timestamp.nullable().optional(),
});
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBody>;

export const AdminListQuery = ListQuery;
export type AdminListQuery = z.infer<typeof AdminListQuery>;

/** What each route of `ADMIN_ROUTES` takes: the route builder validates these, and tests walk them. */
export const ADMIN_ROUTE_SCHEMAS = {
  'POST /workspaces': { body: CreateWorkspaceBody },
  'GET /workspaces': { query: AdminListQuery },
  'GET /workspaces/:id': { params: WorkspaceParams },
  'POST /workspaces/:id/api-keys': { params: WorkspaceParams, body: CreateApiKeyBody },
  'GET /workspaces/:id/api-keys': { params: WorkspaceParams, query: AdminListQuery },
  'DELETE /workspaces/:id/api-keys/:key_id': { params: ApiKeyParams },
} as const satisfies Record<AdminRouteKey, RouteSchemas>;
