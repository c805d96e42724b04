import { z } from 'zod';
import { BUCKET_LIMITS, DEFAULT_QUOTA_LIMITS, listOf, SCOPES, Uuid, UtcTimestamp, type BucketName, type QuotaName, type ServiceName } from '@platform/core';

/**
 * The admin API's resources as it returns them (contract sections 3, 16 and 20). The gateway's
 * renderers are typed against these schemas and the API reference is generated from them.
 */

const EXAMPLE_WORKSPACE_ID = '8d2f4c1a-6b3e-4f5a-9c7d-1e2f3a4b5c6d';
const EXAMPLE_KEY_ID = '5e7a9c1b-3d5f-4a7c-9e1b-3d5f7a9c1e3b';

export const Workspace = z.object({ id: Uuid, name: z.string(), created_at: UtcTimestamp }).meta({
  id: 'Workspace',
  description: 'A tenant: every resource of the services belongs to one workspace, and every API key to one workspace.',
  examples: [{ id: EXAMPLE_WORKSPACE_ID, name: 'Acme', created_at: '2024-12-01T09:30:00.000Z' }],
});
export type Workspace = z.infer<typeof Workspace>;

export const WorkspaceList = listOf(Workspace, 'WorkspaceList');
export type WorkspaceList = z.infer<typeof WorkspaceList>;

/** A key's limit per bucket as stored; only the buckets it overrides. */
export const RateLimitsMap = z
  .object(
    Object.fromEntries((Object.keys(BUCKET_LIMITS) as BucketName[]).map((bucket) => [bucket, z.int().min(1).optional()])) as Record<
      BucketName,
      z.ZodOptional<z.ZodInt>
    >,
  )
  .nullable()
  .meta({ description: "Requests per minute per bucket this key has instead of the platform's; null: the platform's limits." });

const apiKeyFields = {
  id: Uuid,
  name: z.string(),
  scopes: z
    .array(z.string())
    .nullable()
    .meta({ description: `What the key may do, of ${SCOPES.map((scope) => `\`${scope}\``).join(', ')}; null: unrestricted.` }),
  rate_limits: RateLimitsMap,
};

const apiKeyDates = {
  token_prefix: z.string().meta({ description: 'The first characters of the token, to recognise it.' }),
  created_at: UtcTimestamp,
  expires_at: UtcTimestamp.nullable().meta({ description: 'From then on the key gets 401; null: never.' }),
  revoked_at: UtcTimestamp.nullable(),
  last_used_at: UtcTimestamp.nullable().meta({ description: 'Counted by the gateways, at most 60 s behind.' }),
};

const EXAMPLE_KEY = {
  id: EXAMPLE_KEY_ID,
  name: 'scanner',
  scopes: ['tickets:read', 'tickets:write'],
  rate_limits: { events: 50 },
  token_prefix: 'plk_4f9X',
  created_at: '2024-12-01T09:30:00.000Z',
  expires_at: null,
  revoked_at: null,
  last_used_at: '2024-12-02T08:00:00.000Z',
};

export const ApiKey = z.object({ ...apiKeyFields, ...apiKeyDates }).meta({
  id: 'ApiKey',
  description: 'An API key of a workspace; its token is shown only when it is created or rolled.',
  examples: [EXAMPLE_KEY],
});
export type ApiKey = z.infer<typeof ApiKey>;

export const ApiKeyWithToken = z
  .object({
    ...apiKeyFields,
    token: z.string().meta({ description: 'The secret: `plk_` and 32 or more base62 characters. Shown only in this answer.' }),
    ...apiKeyDates,
  })
  .meta({
    id: 'ApiKeyWithToken',
    description: 'A new API key with its token, the only time the token is shown.',
    examples: [{ ...EXAMPLE_KEY, token: 'plk_4f9XbT2kQ8mZr1LwYc7VnHs3JdPa6EgU', last_used_at: null }],
  });
export type ApiKeyWithToken = z.infer<typeof ApiKeyWithToken>;

export const ApiKeyList = listOf(ApiKey, 'ApiKeyList');
export type ApiKeyList = z.infer<typeof ApiKeyList>;

const count = z.int().min(0);

export const UsageBucket = z
  .object({
    start: UtcTimestamp.meta({ description: 'The beginning of the UTC hour or day.' }),
    requests: count,
    by_status: z
      .object({ '2xx': count, '3xx': count, '4xx': count.meta({ description: 'The 4xx answers other than 429.' }), '429': count, '5xx': count })
      .meta({ description: 'The answers by status class.' }),
  })
  .meta({ id: 'UsageBucket' });
export type UsageBucket = z.infer<typeof UsageBucket>;

export const Usage = z.object({ data: z.array(UsageBucket).meta({ description: 'Oldest first; only buckets with traffic.' }) }).meta({
  id: 'Usage',
  description: "A key's requests per UTC hour or day, counted by the gateways.",
  examples: [{ data: [{ start: '2024-12-01T09:00:00.000Z', requests: 12, by_status: { '2xx': 10, '3xx': 0, '4xx': 1, '429': 1, '5xx': 0 } }] }],
});
export type Usage = z.infer<typeof Usage>;

/** What each quota counts, for the reference; one text per quota name of core's QUOTA_NAMES. */
export const QUOTA_DESCRIPTIONS: Readonly<Record<QuotaName, string>> = {
  pipelines: 'Pipelines of the workspace (pipelines service).',
  scheduled_pipelines: 'Pipelines with a schedule, paused ones included (pipelines service).',
  webhook_endpoints: 'Webhook endpoints per service: events, warehouse and pipelines each allow this many.',
  idempotency_bytes: "Bytes of the workspace's stored idempotent answers (status, headers and body as stored; gateway).",
};

const described = <T extends z.ZodType>(schema: T, name: QuotaName, more = ''): T => schema.meta({ description: `${QUOTA_DESCRIPTIONS[name]}${more}` });

const storedQuota = (name: QuotaName) =>
  described(
    count.nullable(),
    name,
    ` The value set for this workspace; null: the platform default (${DEFAULT_QUOTA_LIMITS[name]} unless configured otherwise).`,
  );

const EXAMPLE_QUOTAS = {
  pipelines: null,
  scheduled_pipelines: 10,
  webhook_endpoints: null,
  idempotency_bytes: null,
  limits: { ...DEFAULT_QUOTA_LIMITS, scheduled_pipelines: 10 },
  usage: { pipelines: 42, scheduled_pipelines: 7, webhook_endpoints: { events: 2, warehouse: 0, pipelines: 1 }, idempotency_bytes: 183_204 },
};

/**
 * A workspace's quotas (contract section 20): the values set for it (null: the platform default),
 * the limits in force, and what it uses now. `webhook_endpoints` is per service: one limit that
 * each service applies to its own endpoints, and the usage of each service.
 */
export const WorkspaceQuotas = z
  .object({
    pipelines: storedQuota('pipelines'),
    scheduled_pipelines: storedQuota('scheduled_pipelines'),
    webhook_endpoints: storedQuota('webhook_endpoints'),
    idempotency_bytes: storedQuota('idempotency_bytes'),
    limits: z
      .object({
        pipelines: described(count, 'pipelines'),
        scheduled_pipelines: described(count, 'scheduled_pipelines'),
        webhook_endpoints: described(count, 'webhook_endpoints'),
        idempotency_bytes: described(count, 'idempotency_bytes'),
      } satisfies Record<QuotaName, z.ZodType>)
      .meta({ description: 'The limits in force: the value set for the workspace, else the platform default.' }),
    usage: z
      .object({
        pipelines: described(count, 'pipelines'),
        scheduled_pipelines: described(count, 'scheduled_pipelines'),
        webhook_endpoints: z
          .object({ events: count, warehouse: count, pipelines: count } satisfies Record<ServiceName, z.ZodType>)
          .meta({ description: 'Webhook endpoints of each service; each is held to `limits.webhook_endpoints`.' }),
        idempotency_bytes: described(count, 'idempotency_bytes'),
      } satisfies Record<QuotaName, z.ZodType>)
      .meta({ description: 'What the workspace has now, as each service counts it at the time of the answer.' }),
  } satisfies Record<QuotaName | 'limits' | 'usage', z.ZodType>)
  .meta({ id: 'WorkspaceQuotas', description: "A workspace's quotas: the values set, the limits in force and the usage.", examples: [EXAMPLE_QUOTAS] });
export type WorkspaceQuotas = z.infer<typeof WorkspaceQuotas>;
