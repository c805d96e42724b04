import { z } from 'zod';
import { BUCKET_LIMITS, codePointString, ListQuery, SCOPES, Timestamp, Uuid, type AdminRouteKey, type BucketName, type RouteSchemas } from '@platform/core';

export const WorkspaceParams = z.object({ id: Uuid });
export type WorkspaceParams = z.infer<typeof WorkspaceParams>;

export const ApiKeyParams = z.object({ id: Uuid, key_id: Uuid });
export type ApiKeyParams = z.infer<typeof ApiKeyParams>;

export const CreateWorkspaceBody = z.strictObject({ name: codePointString(1, 200) });
export type CreateWorkspaceBody = z.infer<typeof CreateWorkspaceBody>;

const KeyName = codePointString(1, 200);

/** null = unrestricted; otherwise a non-empty list of known scopes. */
const KeyScopes = z.array(z.enum(SCOPES)).min(1).nullable();

export const MAX_KEY_RATE_LIMIT = 100_000;

/** null = the platform's limits; else per bucket of contract section 6, requests per minute (contract section 16). */
export const KeyRateLimits = z
  .strictObject(
    Object.fromEntries(
      (Object.keys(BUCKET_LIMITS) as BucketName[]).map((bucket) => [
        bucket,
        z
          .number()
          .int()
          .min(1)
          .max(MAX_KEY_RATE_LIMIT)
          .optional()
          .meta({ description: `Requests per minute in the ${bucket} bucket.` }),
      ]),
    ) as Record<BucketName, z.ZodOptional<z.ZodNumber>>,
  )
  .nullable()
  .meta({ description: "The key's own limit per bucket; a bucket not named (or null) keeps the platform's limit." });

/** `scopes` omitted (or null) = unrestricted. */
export const CreateApiKeyBody = z.strictObject({
  name: KeyName,
  scopes: KeyScopes.optional(),
  expires_at: Timestamp.nullable().optional(),
  rate_limits: KeyRateLimits.optional(),
});
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBody>;

/** Fields omitted stay as they are; `scopes: null` makes the key unrestricted, `rate_limits` replaces the whole map. */
export const UpdateApiKeyBody = z.strictObject({
  name: KeyName.optional(),
  scopes: KeyScopes.optional(),
  rate_limits: KeyRateLimits.optional(),
});
export type UpdateApiKeyBody = z.infer<typeof UpdateApiKeyBody>;

export const MAX_ROLL_OVERLAP_SECONDS = 604_800;
export const DEFAULT_ROLL_OVERLAP_SECONDS = 86_400;

export const RollApiKeyBody = z.strictObject({
  expires_in_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_ROLL_OVERLAP_SECONDS)
    .default(DEFAULT_ROLL_OVERLAP_SECONDS)
    .meta({ description: 'How long the old token keeps working (0: it stops at once). Never extends an earlier expiry.' }),
});
export type RollApiKeyBody = z.infer<typeof RollApiKeyBody>;

export const UsageQuery = z.object({
  from: Timestamp.optional().meta({ description: 'Inclusive: buckets starting at or after it. Default: `to` minus 24 hours.' }),
  to: Timestamp.optional().meta({ description: 'Exclusive: buckets starting before it. Default: now.' }),
  granularity: z.enum(['hour', 'day']).default('hour').meta({ description: 'UTC hours or UTC days.' }),
});
export type UsageQuery = z.infer<typeof UsageQuery>;

export const AdminListQuery = ListQuery;
export type AdminListQuery = z.infer<typeof AdminListQuery>;

/** What each route of `ADMIN_ROUTES` takes: the route builder validates these, and tests walk them. */
export const ADMIN_ROUTE_SCHEMAS = {
  'POST /workspaces': { body: CreateWorkspaceBody },
  'GET /workspaces': { query: AdminListQuery },
  'GET /workspaces/:id': { params: WorkspaceParams },
  'POST /workspaces/:id/api-keys': { params: WorkspaceParams, body: CreateApiKeyBody },
  'GET /workspaces/:id/api-keys': { params: WorkspaceParams, query: AdminListQuery },
  'PATCH /workspaces/:id/api-keys/:key_id': { params: ApiKeyParams, body: UpdateApiKeyBody },
  'DELETE /workspaces/:id/api-keys/:key_id': { params: ApiKeyParams },
  'POST /workspaces/:id/api-keys/:key_id/roll': { params: ApiKeyParams, body: RollApiKeyBody },
  'GET /workspaces/:id/api-keys/:key_id/usage': { params: ApiKeyParams, query: UsageQuery },
} as const satisfies Record<AdminRouteKey, RouteSchemas>;
