// Calls to the gateway from the console, through the platform's own client (@platform/client, its
// browser build served beside these modules as ./client/): the admin API with the admin token, the
// services' public API with the console's session key. Same origin, so no CORS and no cookie.
import {
  createAdminClient,
  createClient,
  PlatformApiError,
  unwrap,
  type AdminClient,
  type admin as adminApi,
  type events,
  type FetchResult,
  type Page,
  type pipelines,
  type PlatformClient,
  type warehouse,
} from './client/index.js';

export { PlatformApiError, unwrap, type FetchResult, type Page, type PlatformClient };

export interface ServiceMeta {
  name: string;
  prefix: string;
  /** Whether the gateway routes this service's /webhook-endpoints yet. */
  webhooks: boolean;
  event_types: string[];
}

/** A rate limit bucket (contract section 6) and the platform's limit in it, requests per minute. */
export interface RateLimitBucket {
  name: string;
  limit: number;
}

/** Served by the gateway from @platform/core (never copied into the page). */
export interface Meta {
  version: string;
  scopes: Scope[];
  rate_limit_buckets: RateLimitBucket[];
  /** The highest limit per minute a key may have in a bucket. */
  rate_limit_max: number;
  services: ServiceMeta[];
}

type AdminSchemas = adminApi.components['schemas'];
type EventsSchemas = events.components['schemas'];
type PipelinesSchemas = pipelines.components['schemas'];
type WarehouseSchemas = warehouse.components['schemas'];

export type Workspace = AdminSchemas['Workspace'];
export type ApiKey = AdminSchemas['ApiKey'];
export type NewApiKey = AdminSchemas['ApiKeyWithToken'];
/** A key's requests in one UTC hour (or day) by status class; "4xx" leaves out 429 (contract section 16). */
export type UsageBucket = AdminSchemas['UsageBucket'];
export type StatusClass = `${keyof UsageBucket['by_status']}`;
/** Bucket → requests per minute for a key; a bucket not named (or null) has the platform's limit. */
export type RateLimits = Record<string, number>;
/** What PATCH changes; a field left out stays as it is (contract section 16). */
export type KeyChanges = NonNullable<adminApi.operations['updateApiKey']['requestBody']>['content']['application/json'];
/** A scope of the contract (section 4). */
export type Scope = NonNullable<KeyChanges['scopes']>[number];
/** A workspace's quotas (contract section 20): the values set (null: the platform default), the limits in force and the usage. */
export type WorkspaceQuotas = AdminSchemas['WorkspaceQuotas'];

export type Pipeline = PipelinesSchemas['Pipeline'];
/** What POST /pipelines takes. */
export type NewPipeline = pipelines.operations['createPipeline']['requestBody']['content']['application/json'];
/** A pipeline's schedule (contract section 13). */
export type Schedule = NonNullable<Pipeline['schedule']>;
/** A connector and its config, as the pipelines page shows any of them. */
export interface ConnectorSpec {
  connector: string;
  config: Record<string, unknown>;
}
export type Run = PipelinesSchemas['Run'];
export type RunStatus = Run['status'];
/** One line of a run's log (contract section 14). */
export type RunLogLine = PipelinesSchemas['RunLogLine'];
/** A pipeline's runs per UTC hour or day by their status now (decision 0016). */
export type RunSeries = PipelinesSchemas['RunSeries'];

/** The webhook endpoints API, the same in every service (contract section 11). */
export type WebhookEndpoint = EventsSchemas['WebhookEndpoint'] & { secret?: string };
export type WebhookEventType = EventsSchemas['WebhookEndpoint']['events'][number];
export type Delivery = EventsSchemas['WebhookDelivery'];
/** An endpoint's delivery attempts per UTC hour or day by outcome (decision 0016). */
export type DeliverySeries = EventsSchemas['WebhookDeliverySeries'];

/** An event of the events service (contract section 8). */
export type PlatformEvent = EventsSchemas['Event'];
export type Ticket = EventsSchemas['Ticket'];
export type TicketStatus = Ticket['status'];
/** One entry of a ticket's check-in history (contract section 15). */
export type CheckIn = EventsSchemas['Checkin'];
export type CheckInAction = CheckIn['action'];
/** An event's live figures (contract section 15); `gate: null` counts validations without a gate. */
export type EventStats = EventsSchemas['EventStats'];
/** An event's check-ins per UTC hour or day, in total and per gate (decision 0016). */
export type CheckInSeries = EventsSchemas['EventCheckinSeries'];

/** The warehouse's items, locations and stock (contract sections 9 and 18). */
export type Item = WarehouseSchemas['Item'];
export type Location = WarehouseSchemas['Location'];
/** An item's stock at one location (`location_id` null: the unassigned level). */
export type StockLevel = WarehouseSchemas['StockLevel'];
export type LocationStockEntry = WarehouseSchemas['LocationStockEntry'];
export type Reservation = WarehouseSchemas['Reservation'];
export type AdjustmentReason = WarehouseSchemas['StockAdjustment']['reason'];

/**
 * How every call leaves the page: never from or into the HTTP cache (answers carry tokens and
 * workspace data), without cookies, and refused rather than followed when redirected.
 */
export const REQUEST_OPTIONS = { cache: 'no-store', credentials: 'omit', redirect: 'error' } as const satisfies RequestInit;

/**
 * The client's retries, kept short for a person waiting: a 429, a 503 or no answer is tried twice
 * more within a few seconds (POSTs and PATCHes with the same Idempotency-Key, so nothing runs
 * twice); an answer asking to wait longer is shown as it is.
 */
export const RETRY = { maxRetries: 2, maxRetryDelayMs: 5_000 } as const;

const common = () => ({ baseUrl: window.location.origin, fetch: (request: Request) => fetch(request, REQUEST_OPTIONS), ...RETRY });

/** The services' client with a session key. */
export const platformClient = (apiKey: string): PlatformClient => createClient({ ...common(), apiKey });

let adminClient: { token: string; client: AdminClient } | null = null;

/** The admin API's client with this token (one kept while the token stays the same). */
function adminApiWith(adminToken: string): AdminClient {
  if (adminClient?.token !== adminToken) adminClient = { token: adminToken, client: createAdminClient({ ...common(), adminToken }) };
  return adminClient.client;
}

export async function loadMeta(): Promise<Meta> {
  const res = await fetch('/console/meta.json', { cache: 'no-cache', credentials: 'omit' });
  if (!res.ok) throw new Error(`The console could not load its settings (${res.status}).`);
  return (await res.json()) as Meta;
}

const keyParams = (workspaceId: string, keyId: string) => ({ path: { id: workspaceId, key_id: keyId } });

/** The admin API (contract sections 3, 16 and 20) with the admin token. */
export const admin = {
  listWorkspaces: (token: string, cursor?: string | null) =>
    unwrap(adminApiWith(token).GET('/workspaces', { params: { query: { limit: 100, cursor: cursor ?? undefined } } })),
  createWorkspace: (token: string, name: string) => unwrap(adminApiWith(token).POST('/workspaces', { body: { name } })),
  getWorkspace: (token: string, workspaceId: string) => unwrap(adminApiWith(token).GET('/workspaces/{id}', { params: { path: { id: workspaceId } } })),
  listKeys: (token: string, workspaceId: string, cursor?: string | null) =>
    unwrap(adminApiWith(token).GET('/workspaces/{id}/api-keys', { params: { path: { id: workspaceId }, query: { limit: 100, cursor: cursor ?? undefined } } })),
  createKey: (token: string, workspaceId: string, body: { name: string; scopes: Scope[] | null; expires_at: string | null; rate_limits?: RateLimits | null }) =>
    unwrap(adminApiWith(token).POST('/workspaces/{id}/api-keys', { params: { path: { id: workspaceId } }, body })),
  getKey: (token: string, workspaceId: string, keyId: string) =>
    unwrap(adminApiWith(token).GET('/workspaces/{id}/api-keys/{key_id}', { params: keyParams(workspaceId, keyId) })),
  /** `keepalive`: the request outlives the page (the session key's revocation on pagehide). */
  revokeKey: (token: string, workspaceId: string, keyId: string, keepalive = false) =>
    unwrap(adminApiWith(token).DELETE('/workspaces/{id}/api-keys/{key_id}', { params: keyParams(workspaceId, keyId), keepalive })),
  updateKey: (token: string, workspaceId: string, keyId: string, body: KeyChanges) =>
    unwrap(adminApiWith(token).PATCH('/workspaces/{id}/api-keys/{key_id}', { params: keyParams(workspaceId, keyId), body })),
  /** A new key like this one (its token shown once); this one keeps working `expiresInSeconds` longer at most. */
  rollKey: (token: string, workspaceId: string, keyId: string, expiresInSeconds: number) =>
    unwrap(
      adminApiWith(token).POST('/workspaces/{id}/api-keys/{key_id}/roll', {
        params: keyParams(workspaceId, keyId),
        body: { expires_in_seconds: expiresInSeconds },
      }),
    ),
  /** The workspace's quotas with its usage, which the gateway asks of every service (503 while one does not answer). */
  quotas: (token: string, workspaceId: string) => unwrap(adminApiWith(token).GET('/workspaces/{id}/quotas', { params: { path: { id: workspaceId } } })),
  /** The key's requests per UTC hour from `from` until now, oldest first, hours with traffic only. */
  keyUsage: (token: string, workspaceId: string, keyId: string, from: string) =>
    unwrap(
      adminApiWith(token).GET('/workspaces/{id}/api-keys/{key_id}/usage', {
        params: { ...keyParams(workspaceId, keyId), query: { granularity: 'hour', from } },
      }),
    ),
};

/** The query of a page of 100 from `cursor` (the first page when null). */
export const pageAt = (cursor: string | null) => ({ limit: 100, cursor: cursor ?? undefined });

/**
 * Every item of a list whose pages run oldest first (contract section 2), from the page at `from`
 * (the first when null), up to `maxPages` pages of 100; `complete` is false when more were left,
 * and `next` is then the cursor of the first page not read.
 */
export async function allPages<T>(
  fetchPage: (cursor: string | null) => Promise<Page<T>>,
  maxPages = 5,
  from: string | null = null,
): Promise<{ items: T[]; complete: boolean; next: string | null }> {
  const items: T[] = [];
  let cursor = from;
  for (let page = 0; page < maxPages; page++) {
    const result: Page<T> = await fetchPage(cursor);
    items.push(...result.data);
    cursor = result.next_cursor;
    if (cursor === null) return { items, complete: true, next: null };
  }
  return { items, complete: false, next: cursor };
}
