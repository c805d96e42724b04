import { z } from 'zod';
import { ApiError, errorBody } from '../http/errors';
import type { ErrorDoc } from '../openapi/route-docs';
import type { QuotaName } from '@platform/contract';

/**
 * Quotas per workspace (contract section 20): what a workspace may keep, whatever its rate
 * limits. The gateway stores per-workspace values (null: the platform default) and signs the
 * limits in force into every proxied request; each service enforces the ones it owns in its own
 * database, under a lock per workspace, so concurrent creates cannot pass them.
 */
export type QuotaLimits = Record<QuotaName, number>;

/** The contract's defaults; a deployment overrides them by configuration (the gateway's WORKSPACE_QUOTA_*). */
export const DEFAULT_QUOTA_LIMITS: Readonly<QuotaLimits> = Object.freeze({
  pipelines: 1_000,
  scheduled_pipelines: 100,
  /** Per service: events, warehouse and pipelines each allow this many. */
  webhook_endpoints: 20,
  idempotency_bytes: 64 * 1024 * 1024,
});

/** The largest value a quota takes (a Postgres integer, and far beyond any real need). */
export const MAX_QUOTA_VALUE = 2_147_483_647;
/** idempotency_bytes counts bytes: up to 1 TiB. */
export const MAX_IDEMPOTENCY_BYTES_QUOTA = 1024 ** 4;

/** The quotas a service enforces; the gateway keeps idempotency_bytes itself. */
export const SERVICE_QUOTA_NAMES = ['pipelines', 'scheduled_pipelines', 'webhook_endpoints'] as const;
export type ServiceQuotaName = (typeof SERVICE_QUOTA_NAMES)[number];
export type ServiceQuotaLimits = Record<ServiceQuotaName, number>;

export const DEFAULT_SERVICE_QUOTA_LIMITS: Readonly<ServiceQuotaLimits> = Object.freeze({
  pipelines: DEFAULT_QUOTA_LIMITS.pipelines,
  scheduled_pipelines: DEFAULT_QUOTA_LIMITS.scheduled_pipelines,
  webhook_endpoints: DEFAULT_QUOTA_LIMITS.webhook_endpoints,
});

/** `x-platform-quotas`: `pipelines=1000;scheduled_pipelines=100;webhook_endpoints=20`, always in this order. */
export function quotasHeader(limits: ServiceQuotaLimits): string {
  return SERVICE_QUOTA_NAMES.map((name) => `${name}=${limits[name]}`).join(';');
}

const QuotaValue = z.coerce.number().int().min(0).max(MAX_QUOTA_VALUE);

/** The limits in a signed `x-platform-quotas` value; undefined when it is not exactly what quotasHeader writes. */
export function parseQuotasHeader(value: string): ServiceQuotaLimits | undefined {
  const parts = value.split(';');
  if (parts.length !== SERVICE_QUOTA_NAMES.length) return undefined;
  const limits: Partial<ServiceQuotaLimits> = {};
  for (const [index, name] of SERVICE_QUOTA_NAMES.entries()) {
    const [key, raw, extra] = parts[index]!.split('=');
    if (key !== name || extra !== undefined || raw === undefined || !/^\d{1,10}$/.test(raw)) return undefined;
    const parsed = QuotaValue.safeParse(raw);
    if (!parsed.success) return undefined;
    limits[name] = parsed.data;
  }
  return limits as ServiceQuotaLimits;
}

/** What a store answers instead of writing when a create or change would pass a quota: nothing was written. */
export interface QuotaReached {
  kind: 'quota_reached';
  quota: ServiceQuotaName | WorkspaceLimitName;
  limit: number;
}

/**
 * The refusal of one more of `quota` when the workspace already holds `usage` of it: refused once
 * usage reaches the limit (a quota set below usage removes nothing; it refuses further creates).
 */
export function quotaReached(quota: ServiceQuotaName | WorkspaceLimitName, usage: number, limit: number): QuotaReached | undefined {
  return usage >= limit ? { kind: 'quota_reached', quota, limit } : undefined;
}

/**
 * 409 conflict for a create or change that would pass a quota: `errors[0].code = "quota_exceeded"`,
 * and `quota` and `limit` inside `error` beside `code`. Nothing changed.
 */
export function quotaExceeded(quota: QuotaName | WorkspaceLimitName, limit: number, field = ''): ApiError {
  const what = quota === 'api_keys' ? 'API keys' : quota.replaceAll('_', ' ');
  return new ApiError(409, 'conflict', `This workspace has reached its quota of ${limit} ${what}.`, {
    details: { quota, limit },
    errors: [{ in: 'body', field, code: 'quota_exceeded', message: `the workspace's ${quota} quota is ${limit}` }],
  });
}

/**
 * The services' internal route the gateway asks for a workspace's usage (its admin
 * `GET /admin/v1/workspaces/{id}/quotas`): signed like any proxied request, for the workspace in
 * the signed identity. No contract route, so the gateway never proxies a client to it.
 */
export const INTERNAL_USAGE_PATH = '/internal/v1/usage';

const UsageCount = z.number().int().min(0);

/**
 * The answer of INTERNAL_USAGE_PATH: what the workspace holds of each quota the service enforces.
 * Events and warehouse answer `{ webhook_endpoints }`; pipelines all three (its own endpoints).
 */
export const ServiceUsage = z.strictObject({
  pipelines: UsageCount.optional(),
  scheduled_pipelines: UsageCount.optional(),
  webhook_endpoints: UsageCount,
});
export type ServiceUsage = z.infer<typeof ServiceUsage>;

/**
 * A route's documented 409 for a create or change that counts against `quota` (`docs.errors[409]`);
 * the example is the answer at the contract's default limit.
 */
export function quotaExceededDoc(description: string, quota: ServiceQuotaName, field = ''): ErrorDoc {
  const { request_id: _, ...example } = errorBody(quotaExceeded(quota, DEFAULT_SERVICE_QUOTA_LIMITS[quota], field), '').error;
  return { description, example };
}

/**
 * What a workspace keeps beyond the contract's quotas (decision 0018): platform-wide limits, the
 * same for every workspace, from the owning deployable's configuration (not set through the quotas
 * API, whose shape the contract fixes), each counted per workspace (`tickets`: over all its events). A
 * create past one is refused as a quota is: 409 `conflict`, `errors[0].code = "quota_exceeded"`,
 * `error.quota` the limit's name, `error.limit` its value; nothing is written.
 */
export const WORKSPACE_LIMIT_NAMES = ['events', 'tickets', 'items', 'locations', 'active_reservations', 'api_keys'] as const;
export type WorkspaceLimitName = (typeof WORKSPACE_LIMIT_NAMES)[number];

/** The defaults: far above what any one venue, store or team uses, low enough that no workspace fills a shared database. */
export const DEFAULT_WORKSPACE_LIMITS: Readonly<Record<WorkspaceLimitName, number>> = Object.freeze({
  events: 10_000,
  /** Over all the workspace's events: two sold-out stadiums. */
  tickets: 200_000,
  items: 200_000,
  locations: 1_000,
  active_reservations: 20_000,
  api_keys: 1_000,
});

/** A route's documented 409 for a create that counts against a platform limit, its example at the default. */
export function limitExceededDoc(description: string, limit: WorkspaceLimitName, field = ''): ErrorDoc {
  const { request_id: _, ...example } = errorBody(quotaExceeded(limit, DEFAULT_WORKSPACE_LIMITS[limit], field), '').error;
  return { description, example };
}
