// Calls to the gateway from the console: the admin API with the admin token, the services'
// public API with the console's session key. Same origin, so no CORS and no cookie.

export interface Problem {
  in?: string;
  field: string;
  code: string;
  message: string;
}

/** A non-2xx answer, with the contract's error body (section 2) taken apart. */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly problems: Problem[] = [],
    readonly requestId?: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiCallError';
  }
}

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
  scopes: string[];
  rate_limit_buckets: RateLimitBucket[];
  /** The highest limit per minute a key may have in a bucket. */
  rate_limit_max: number;
  services: ServiceMeta[];
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface Workspace {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKey {
  id: string;
  name: string;
  scopes: string[] | null;
  token?: string;
  token_prefix: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  /** Bucket → requests per minute for this key; a bucket not named (or null) has the platform's limit. */
  rate_limits: RateLimits | null;
}

export type RateLimits = Record<string, number>;

/** What PATCH changes; a field left out stays as it is (contract section 16). */
export interface KeyChanges {
  name?: string;
  scopes?: string[] | null;
  rate_limits?: RateLimits | null;
}

export type StatusClass = '2xx' | '3xx' | '4xx' | '429' | '5xx';

/** A key's requests in one UTC hour (or day) by status class; "4xx" leaves out 429 (contract section 16). */
export interface UsageBucket {
  start: string;
  requests: number;
  by_status: Record<StatusClass, number>;
}

export interface ConnectorSpec {
  connector: string;
  config: Record<string, unknown>;
}

/** A pipeline's schedule (contract section 13). */
export type Schedule = { type: 'cron'; cron: string; timezone: string } | { type: 'interval'; every_seconds: number };

export interface Pipeline {
  id: string;
  name: string;
  status: 'active' | 'paused';
  source: ConnectorSpec;
  destination: ConnectorSpec;
  schedule: Schedule | null;
  /** Null without a schedule or while paused. */
  next_run_at: string | null;
  last_successful_run_at: string | null;
  created_at: string;
}

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface Run {
  id: string;
  pipeline_id: string;
  status: RunStatus;
  trigger: string;
  since: string | null;
  dry_run: boolean;
  attempts: number;
  stats: { records_read: number; records_written: number };
  error: { code: string; message: string } | null;
  /** The tick that created the run; null for every other run. */
  scheduled_for: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** One line of a run's log (contract section 14). */
export interface RunLogLine {
  id: string;
  run_id: string;
  attempt: number;
  at: string;
  level: 'info' | 'warn' | 'error';
  message: string;
  data: Record<string, unknown> | null;
}

export interface WebhookEndpoint {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  created_at: string;
  secret?: string;
}

export interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status: 'succeeded' | 'failed';
  response_status: number | null;
  error: string | null;
  created_at: string;
}

/** An event of the events service (contract section 8). */
export interface PlatformEvent {
  id: string;
  name: string;
  starts_at: string;
  ends_at: string | null;
  created_at: string;
}

export type TicketStatus = 'issued' | 'validated';

export interface Ticket {
  id: string;
  event_id: string;
  status: TicketStatus;
  holder_name: string | null;
  metadata: Record<string, string>;
  validated_at: string | null;
  validator_id: string | null;
  gate: string | null;
  created_at: string;
  /** Changed by every validation and reversal (contract section 15). */
  updated_at: string;
}

export type CheckInAction = 'validated' | 'unvalidated' | 'rejected_duplicate';

/** One entry of a ticket's check-in history (contract section 15). */
export interface CheckIn {
  id: string;
  ticket_id: string;
  action: CheckInAction;
  at: string;
  gate: string | null;
  validator_id: string | null;
  scan_id: string | null;
  reason: string | null;
}

/** An event's live figures (contract section 15); `gate: null` counts validations without a gate. */
export interface EventStats {
  event_id: string;
  tickets: { total: number; issued: number; validated: number };
  gates: { gate: string | null; validated: number }[];
  rejected_duplicates: number;
  as_of: string;
}

export interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** Lets the request finish after the tab closes (revoking the session key on pagehide). */
  keepalive?: boolean;
}

/** One JSON call; resolves with the parsed body (undefined for 204), rejects with ApiCallError. */
export async function call<T>(method: string, path: string, token: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json', ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      keepalive: options.keepalive,
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
    });
  } catch {
    throw new ApiCallError(0, 'network_error', 'The gateway could not be reached. Check your connection and retry.');
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (res.ok) return parsed as T;
  const error = (parsed as { error?: Record<string, unknown> } | undefined)?.error;
  if (!error)
    throw new ApiCallError(res.status, 'http_error', `The gateway answered ${res.status} ${res.statusText}.`, [], res.headers.get('x-request-id') ?? undefined);
  const { code, message, errors, request_id: requestId, ...details } = error;
  throw new ApiCallError(
    res.status,
    typeof code === 'string' ? code : 'http_error',
    typeof message === 'string' ? message : `The gateway answered ${res.status}.`,
    Array.isArray(errors) ? (errors as Problem[]) : [],
    typeof requestId === 'string' ? requestId : undefined,
    details,
  );
}

export async function loadMeta(): Promise<Meta> {
  const res = await fetch('/console/meta.json', { cache: 'no-cache', credentials: 'omit' });
  if (!res.ok) throw new Error(`The console could not load its settings (${res.status}).`);
  return (await res.json()) as Meta;
}

const keyPath = (workspaceId: string, keyId: string): string => `/admin/v1/workspaces/${encodeURIComponent(workspaceId)}/api-keys/${encodeURIComponent(keyId)}`;

const cursorQuery = (cursor: string | null | undefined): string => (cursor ? `&cursor=${encodeURIComponent(cursor)}` : '');

/** The admin API (contract section 3) with the admin token. */
export const admin = {
  listWorkspaces: (token: string, cursor?: string | null) => call<Page<Workspace>>('GET', `/admin/v1/workspaces?limit=100${cursorQuery(cursor)}`, token),
  createWorkspace: (token: string, name: string) => call<Workspace>('POST', '/admin/v1/workspaces', token, { body: { name } }),
  listKeys: (token: string, workspaceId: string, cursor?: string | null) =>
    call<Page<ApiKey>>('GET', `/admin/v1/workspaces/${encodeURIComponent(workspaceId)}/api-keys?limit=100${cursorQuery(cursor)}`, token),
  createKey: (
    token: string,
    workspaceId: string,
    body: { name: string; scopes: string[] | null; expires_at: string | null; rate_limits?: RateLimits | null },
  ) => call<ApiKey & { token: string }>('POST', `/admin/v1/workspaces/${encodeURIComponent(workspaceId)}/api-keys`, token, { body }),
  revokeKey: (token: string, workspaceId: string, keyId: string, keepalive = false) => call<void>('DELETE', keyPath(workspaceId, keyId), token, { keepalive }),
  updateKey: (token: string, workspaceId: string, keyId: string, body: KeyChanges) => call<ApiKey>('PATCH', keyPath(workspaceId, keyId), token, { body }),
  /** A new key like this one (its token shown once); this one keeps working `expiresInSeconds` longer at most. */
  rollKey: (token: string, workspaceId: string, keyId: string, expiresInSeconds: number) =>
    call<ApiKey & { token: string }>('POST', `${keyPath(workspaceId, keyId)}/roll`, token, { body: { expires_in_seconds: expiresInSeconds } }),
  /** The key's requests per UTC hour from `from` until now, oldest first, hours with traffic only. */
  keyUsage: (token: string, workspaceId: string, keyId: string, from: string) =>
    call<{ data: UsageBucket[] }>('GET', `${keyPath(workspaceId, keyId)}/usage?granularity=hour&from=${encodeURIComponent(from)}`, token),
};

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

export const withCursor = (path: string, cursor: string | null): string => `${path}${path.includes('?') ? '&' : '?'}limit=100${cursorQuery(cursor)}`;
