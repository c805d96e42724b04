import { ADMIN_PREFIX, DEFAULT_VERSION, SERVICES } from '@platform/contract';
import createOpenApiClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths as AdminPaths } from './generated/admin.js';
import type { paths as EventsPaths } from './generated/events.js';
import type { paths as PipelinesPaths } from './generated/pipelines.js';
import type { paths as WarehousePaths } from './generated/warehouse.js';
import { newIdempotencyKey } from './idempotency-key.js';
import { retryingFetch, type Fetch, type RetryOptions } from './retry.js';

/** The platform version this client was generated for (contract section 5). */
export const PLATFORM_VERSION = DEFAULT_VERSION;

/** Where each API lives under the gateway (contract section 1). */
export const API_PREFIXES = {
  events: SERVICES.events.prefix,
  warehouse: SERVICES.warehouse.prefix,
  pipelines: SERVICES.pipelines.prefix,
  admin: ADMIN_PREFIX,
} as const;

interface CommonOptions {
  /** The gateway, e.g. `http://127.0.0.1:8080` (no API prefix: each API adds its own). */
  baseUrl: string;
  /** Tries after the first on a network error, 429, 503 or an idempotency 409 (default 3; 0: never). */
  maxRetries?: number;
  /** The longest wait before one retry, in ms (default 20 000); an answer asking for longer is returned instead. */
  maxRetryDelayMs?: number;
  /** The fetch to send with (default `globalThis.fetch`). */
  fetch?: Fetch;
  /** Extra retry settings (tests: `sleep`, `random`, `baseDelayMs`). */
  retry?: Omit<RetryOptions, 'maxRetries' | 'maxDelayMs' | 'retryUnanswered'>;
}

export interface ClientOptions extends CommonOptions {
  /** An API key of the workspace (`plk_…`). */
  apiKey: string;
  /** The `platform-version` to send (default: the version these types were generated from). */
  version?: string;
}

export interface AdminClientOptions extends CommonOptions {
  /** The platform's admin token (`PLATFORM_ADMIN_TOKEN`). */
  adminToken: string;
}

export type EventsClient = Client<EventsPaths>;
export type WarehouseClient = Client<WarehousePaths>;
export type PipelinesClient = Client<PipelinesPaths>;
export type AdminClient = Client<AdminPaths>;

/** The three services' typed clients, sharing one key, version and retry policy. */
export interface PlatformClient {
  events: EventsClient;
  warehouse: WarehouseClient;
  pipelines: PipelinesClient;
}

const writes = (method: string): boolean => method === 'POST' || method === 'PATCH';

function headersMiddleware(headers: Record<string, string>, idempotent: boolean): Middleware {
  return {
    onRequest({ request }) {
      for (const [name, value] of Object.entries(headers)) request.headers.set(name, value);
      // The caller's own key wins: it may be one kept across a restart of the caller.
      if (idempotent && writes(request.method) && !request.headers.has('idempotency-key')) request.headers.set('idempotency-key', newIdempotencyKey());
      return request;
    },
  };
}

function sender(options: CommonOptions, retryUnanswered?: (request: Request) => boolean): Fetch {
  const fetchImpl: Fetch = options.fetch ?? ((request) => globalThis.fetch(request));
  return retryingFetch(fetchImpl, { ...options.retry, maxRetries: options.maxRetries, maxDelayMs: options.maxRetryDelayMs, retryUnanswered });
}

const trimmed = (url: string): string => url.replace(/\/+$/, '');

/**
 * The platform's client: `events`, `warehouse` and `pipelines`, each a typed openapi-fetch client
 * on its base path. Every request sends the key and `platform-version`; every POST and PATCH an
 * `Idempotency-Key` (a fresh UUID unless the call sets one), kept on every retry, so a retry after a
 * lost answer replays that answer instead of running again.
 */
export function createClient(options: ClientOptions): PlatformClient {
  const middleware = headersMiddleware({ authorization: `Bearer ${options.apiKey}`, 'platform-version': options.version ?? PLATFORM_VERSION }, true);
  const fetch = sender(options);
  const base = trimmed(options.baseUrl);
  const make = <P extends object>(prefix: string): Client<P> => {
    const client = createOpenApiClient<P>({ baseUrl: `${base}${prefix}`, fetch });
    client.use(middleware);
    return client;
  };
  return {
    events: make<EventsPaths>(API_PREFIXES.events),
    warehouse: make<WarehousePaths>(API_PREFIXES.warehouse),
    pipelines: make<PipelinesPaths>(API_PREFIXES.pipelines),
  };
}

/**
 * The admin API's client (workspaces and API keys), with the admin token. The admin API takes no
 * Idempotency-Key, so a POST or PATCH is sent again only after a 429 (refused before it ran), never
 * after a lost answer or a 503; reads and revocations are retried like the services' calls.
 */
export function createAdminClient(options: AdminClientOptions): AdminClient {
  const client = createOpenApiClient<AdminPaths>({
    baseUrl: `${trimmed(options.baseUrl)}${API_PREFIXES.admin}`,
    fetch: sender(options, (request) => !writes(request.method)),
  });
  client.use(headersMiddleware({ authorization: `Bearer ${options.adminToken}` }, false));
  return client;
}
