import { z } from 'zod';
import {
  BUCKET_LIMITS,
  codePointString,
  DEFAULT_WORKSPACE_LIMITS,
  limitExceededDoc,
  ListQuery,
  MAX_IDEMPOTENCY_BYTES_QUOTA,
  MAX_QUOTA_VALUE,
  SCOPES,
  Timestamp,
  Uuid,
  type AdminRouteKey,
  type BucketName,
  type QuotaLimits,
  type QuotaName,
  type RouteDeclaration,
  type RouteDocs,
} from '@platform/core';
import { ApiKey, ApiKeyList, ApiKeyWithToken, QUOTA_DESCRIPTIONS, Usage, Workspace, WorkspaceList, WorkspaceQuotas } from './admin.resources';

export const WorkspaceParams = z.object({ id: Uuid });
export type WorkspaceParams = z.infer<typeof WorkspaceParams>;

export const ApiKeyParams = z.object({ id: Uuid, key_id: Uuid });
export type ApiKeyParams = z.infer<typeof ApiKeyParams>;

export const CreateWorkspaceBody = z.strictObject({ name: codePointString(1, 200) });
export type CreateWorkspaceBody = z.infer<typeof CreateWorkspaceBody>;

const KeyName = codePointString(1, 200);

/**
 * null = unrestricted; otherwise a non-empty list of known scopes, each once: input is stored as
 * sent or refused (contract sections 2 and 20), so a scope listed twice is refused, not folded.
 */
const KeyScopes = z
  .array(z.enum(SCOPES))
  .min(1)
  .superRefine((scopes, ctx) => {
    scopes.forEach((scope, i) => {
      if (scopes.indexOf(scope) !== i)
        ctx.addIssue({ code: 'custom', path: [i], message: `${scope} is listed already: each scope once`, params: { code: 'invalid_format' } });
    });
  })
  .nullable();

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

/** The highest value each quota takes, set per workspace or as the platform default (WORKSPACE_QUOTA_*). */
export const MAX_QUOTA: Readonly<QuotaLimits> = Object.freeze({
  pipelines: MAX_QUOTA_VALUE,
  scheduled_pipelines: MAX_QUOTA_VALUE,
  webhook_endpoints: MAX_QUOTA_VALUE,
  idempotency_bytes: MAX_IDEMPOTENCY_BYTES_QUOTA,
});

const quotaSetting = (name: QuotaName) =>
  z
    .number()
    .int()
    .min(0)
    .max(MAX_QUOTA[name])
    .nullable()
    .optional()
    .meta({ description: `${QUOTA_DESCRIPTIONS[name]} null: the platform default. Omitted: unchanged.` });

/**
 * Only the quotas named change (contract section 20); null returns one to the platform default. A
 * value below what the workspace already has removes nothing: only further creates are refused.
 */
export const UpdateWorkspaceQuotasBody = z.strictObject({
  pipelines: quotaSetting('pipelines'),
  scheduled_pipelines: quotaSetting('scheduled_pipelines'),
  webhook_endpoints: quotaSetting('webhook_endpoints'),
  idempotency_bytes: quotaSetting('idempotency_bytes'),
} satisfies Record<QuotaName, z.ZodType>);
export type UpdateWorkspaceQuotasBody = z.infer<typeof UpdateWorkspaceQuotasBody>;

export const AdminListQuery = ListQuery;
export type AdminListQuery = z.infer<typeof AdminListQuery>;

/** An API-key route's docs: in the "API keys" group, a 404 for an unknown workspace or key unless it says otherwise. */
const keyDocs = (docs: Omit<RouteDocs, 'tag'>): RouteDocs => ({ tag: 'API keys', errors: { 404: 'No such workspace or key.' }, ...docs });

/** A quota route's docs: in the "Quotas" group, 404 for an unknown workspace, 503 when a service does not give its usage in time. */
const quotaDocs = (docs: Omit<RouteDocs, 'tag'>): RouteDocs => ({
  tag: 'Quotas',
  errors: { 404: 'No such workspace.', 503: 'A service did not give its usage in time; retry.' },
  ...docs,
});

/** What each route of `ADMIN_ROUTES` takes and answers: the route builder validates these, the API reference documents them, and tests walk them. */
export const ADMIN_ROUTE_SCHEMAS = {
  'POST /workspaces': {
    body: CreateWorkspaceBody,
    docs: {
      operationId: 'createWorkspace',
      summary: 'Create a workspace',
      responses: { 201: { description: 'The workspace.', schema: Workspace } },
      requestExample: { name: 'Acme' },
    },
  },
  'GET /workspaces': {
    query: AdminListQuery,
    docs: { operationId: 'listWorkspaces', summary: 'List workspaces', responses: { 200: { description: 'A page of workspaces.', schema: WorkspaceList } } },
  },
  'GET /workspaces/:id': {
    params: WorkspaceParams,
    docs: {
      operationId: 'getWorkspace',
      summary: 'Get a workspace',
      responses: { 200: { description: 'The workspace.', schema: Workspace } },
      errors: { 404: 'No such workspace.' },
    },
  },
  'POST /workspaces/:id/api-keys': {
    params: WorkspaceParams,
    body: CreateApiKeyBody,
    docs: keyDocs({
      operationId: 'createApiKey',
      summary: 'Create an API key',
      description:
        `A workspace holds at most \`GATEWAY_WORKSPACE_MAX_API_KEYS\` keys (a gateway setting, default ${DEFAULT_WORKSPACE_LIMITS.api_keys.toLocaleString('en-US')}), counting those neither ` +
        'revoked, expired nor replaced by a roll.',
      responses: { 201: { description: 'The key with its token, shown only here.', schema: ApiKeyWithToken } },
      errors: {
        404: 'No such workspace.',
        409: limitExceededDoc(
          'The workspace already holds as many API keys as `GATEWAY_WORKSPACE_MAX_API_KEYS` allows (`errors[0].code: quota_exceeded`, ' +
            '`error.quota: "api_keys"`, `error.limit`); nothing was created. Revoking a key makes room.',
          'api_keys',
        ),
      },
      requestExample: { name: 'scanner', scopes: ['tickets:read', 'tickets:write'], rate_limits: { events: 50 } },
    }),
  },
  'GET /workspaces/:id/api-keys': {
    params: WorkspaceParams,
    query: AdminListQuery,
    docs: keyDocs({
      operationId: 'listApiKeys',
      summary: 'List API keys',
      description: 'Every key of the workspace, revoked ones too; never a token.',
      responses: { 200: { description: 'A page of keys.', schema: ApiKeyList } },
      errors: { 404: 'No such workspace.' },
    }),
  },
  'GET /workspaces/:id/api-keys/:key_id': {
    params: ApiKeyParams,
    docs: keyDocs({
      operationId: 'getApiKey',
      summary: 'Get an API key',
      description: 'One key of the workspace, revoked or expired too; never its token.',
      responses: { 200: { description: 'The key.', schema: ApiKey } },
    }),
  },
  'PATCH /workspaces/:id/api-keys/:key_id': {
    params: ApiKeyParams,
    body: UpdateApiKeyBody,
    docs: keyDocs({
      operationId: 'updateApiKey',
      summary: 'Change an API key',
      description: 'Fields omitted stay as they are. Every gateway instance applies the change within 1 s.',
      responses: { 200: { description: 'The key.', schema: ApiKey } },
      requestExample: { scopes: ['tickets:read'], rate_limits: { events: 5 } },
    }),
  },
  'DELETE /workspaces/:id/api-keys/:key_id': {
    params: ApiKeyParams,
    docs: keyDocs({
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key',
      description: 'The key fails with 401 on every gateway instance within 1 s.',
      responses: { 204: { description: 'Revoked.' } },
    }),
  },
  'POST /workspaces/:id/api-keys/:key_id/roll': {
    params: ApiKeyParams,
    body: RollApiKeyBody,
    docs: keyDocs({
      operationId: 'rollApiKey',
      summary: 'Roll an API key',
      description:
        'A new key (with its token) with the same name, scopes and limits; the old token keeps working for `expires_in_seconds` more, never longer than it already would. ' +
        'The new key replaces the old one, so a roll never counts against `GATEWAY_WORKSPACE_MAX_API_KEYS`, except a second roll of the same key, which adds one.',
      responses: { 201: { description: 'The new key with its token.', schema: ApiKeyWithToken } },
      errors: {
        404: 'No such workspace or key.',
        409: limitExceededDoc(
          'The key is revoked or expired (`conflict`); or it was rolled already and the workspace holds as many API keys as ' +
            '`GATEWAY_WORKSPACE_MAX_API_KEYS` allows (`errors[0].code: quota_exceeded`, `error.quota: "api_keys"`, `error.limit`). Nothing changed.',
          'api_keys',
        ),
      },
      requestExample: { expires_in_seconds: 3600 },
    }),
  },
  'GET /workspaces/:id/api-keys/:key_id/usage': {
    params: ApiKeyParams,
    query: UsageQuery,
    docs: keyDocs({
      operationId: 'getApiKeyUsage',
      summary: "An API key's usage",
      responses: { 200: { description: 'Requests per UTC hour or day.', schema: Usage } },
    }),
  },
  'GET /workspaces/:id/quotas': {
    params: WorkspaceParams,
    docs: quotaDocs({
      operationId: 'getWorkspaceQuotas',
      summary: "A workspace's quotas",
      description: 'The values set for the workspace (null: the platform default), the limits in force, and its usage, asked of each service.',
      responses: { 200: { description: 'The quotas.', schema: WorkspaceQuotas } },
    }),
  },
  'PATCH /workspaces/:id/quotas': {
    params: WorkspaceParams,
    body: UpdateWorkspaceQuotasBody,
    docs: quotaDocs({
      operationId: 'updateWorkspaceQuotas',
      summary: "Change a workspace's quotas",
      description:
        'Changes the quotas named; null returns one to the platform default. A quota set below what the workspace has removes nothing: only further ' +
        'creates are refused (409 `quota_exceeded`). Every gateway instance signs the new limits into its requests within 1 s. A 503 (a service did ' +
        'not give its usage in time) changed nothing.',
      responses: { 200: { description: 'The quotas after the change.', schema: WorkspaceQuotas } },
      requestExample: { scheduled_pipelines: 10, webhook_endpoints: null },
    }),
  },
} as const satisfies Record<AdminRouteKey, RouteDeclaration>;
