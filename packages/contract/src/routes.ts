/**
 * The platform contract in code (contract sections 3, 5 and 6): versions, scopes, rate-limit
 * buckets and every route with the scope it needs. The gateway routes from this table and each
 * service mounts exactly these routes, so the two cannot drift.
 */

/** The version served when `platform-version` is absent (contract section 5). */
export const DEFAULT_VERSION = '2024-12-01';
export const SUPPORTED_VERSIONS: readonly string[] = [DEFAULT_VERSION];

export const SCOPES = [
  'events:read',
  'events:write',
  'tickets:read',
  'tickets:write',
  'items:read',
  'items:write',
  'stock:write',
  'pipelines:read',
  'pipelines:write',
  'runs:read',
  'runs:write',
  'webhooks:read',
  'webhooks:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Requests per token per rolling minute (contract section 6). */
export const BUCKET_LIMITS = {
  events: 400,
  warehouse: 600,
  'warehouse-bulk': 60,
  pipelines: 300,
  'pipeline-runs': 100,
} as const;
export type BucketName = keyof typeof BUCKET_LIMITS;

export type ServiceName = 'events' | 'warehouse' | 'pipelines';

export const SERVICES = {
  events: { prefix: '/events/v0', bucket: 'events' },
  warehouse: { prefix: '/warehouse/v1', bucket: 'warehouse' },
  pipelines: { prefix: '/pipelines/v3', bucket: 'pipelines' },
} as const satisfies Record<ServiceName, { prefix: string; bucket: BucketName }>;

export interface RouteSpec {
  scope: Scope;
  /** A bucket other than the service's general one. */
  bucket?: BucketName;
}

type RouteKey = `${'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'} /${string}`;

/** The webhook endpoint routes every service has (contract section 11). */
export const WEBHOOK_ENDPOINT_ROUTES = {
  'POST /webhook-endpoints': { scope: 'webhooks:write' },
  'GET /webhook-endpoints': { scope: 'webhooks:read' },
  'GET /webhook-endpoints/:id': { scope: 'webhooks:read' },
  'PATCH /webhook-endpoints/:id': { scope: 'webhooks:write' },
  'DELETE /webhook-endpoints/:id': { scope: 'webhooks:write' },
  'GET /webhook-endpoints/:id/deliveries': { scope: 'webhooks:read' },
  'POST /webhook-endpoints/:id/rotate-secret': { scope: 'webhooks:write' },
  'GET /webhook-endpoints/:id/stats/series': { scope: 'webhooks:read' },
  'POST /webhook-endpoints/:id/deliveries/:delivery_id/resend': { scope: 'webhooks:write' },
} as const satisfies Record<RouteKey, RouteSpec>;
export type WebhookRouteKey = keyof typeof WEBHOOK_ENDPOINT_ROUTES;

export const ROUTES = {
  events: {
    'POST /events': { scope: 'events:write' },
    'GET /events': { scope: 'events:read' },
    'GET /events/:id': { scope: 'events:read' },
    'POST /events/:id/tickets': { scope: 'events:write' },
    'GET /events/:id/tickets': { scope: 'events:read' },
    'POST /events/:id/scans': { scope: 'tickets:write' },
    'GET /events/:id/stats': { scope: 'events:read' },
    'GET /events/:id/stats/series': { scope: 'events:read' },
    'GET /tickets/:id': { scope: 'tickets:read' },
    'POST /tickets/:id/validate': { scope: 'tickets:write' },
    'POST /tickets/:id/unvalidate': { scope: 'tickets:write' },
    'GET /tickets/:id/checkins': { scope: 'tickets:read' },
    ...WEBHOOK_ENDPOINT_ROUTES,
  },
  warehouse: {
    'POST /locations': { scope: 'items:write' },
    'GET /locations': { scope: 'items:read' },
    'POST /items': { scope: 'items:write' },
    'GET /items': { scope: 'items:read' },
    'POST /items/bulk': { scope: 'items:write', bucket: 'warehouse-bulk' },
    'GET /items/:id': { scope: 'items:read' },
    'PATCH /items/:id': { scope: 'items:write' },
    'GET /items/:id/movements': { scope: 'items:read' },
    'POST /items/:id/stock-adjustments': { scope: 'stock:write' },
    'GET /items/:id/stock': { scope: 'items:read' },
    'GET /locations/:id/stock': { scope: 'items:read' },
    'POST /items/:id/transfers': { scope: 'stock:write' },
    'POST /items/:id/reservations': { scope: 'stock:write' },
    'GET /items/:id/reservations': { scope: 'items:read' },
    'GET /reservations/:id': { scope: 'items:read' },
    'POST /reservations/:id/commit': { scope: 'stock:write' },
    'POST /reservations/:id/release': { scope: 'stock:write' },
    ...WEBHOOK_ENDPOINT_ROUTES,
  },
  pipelines: {
    'POST /pipelines': { scope: 'pipelines:write' },
    'GET /pipelines': { scope: 'pipelines:read' },
    'GET /pipelines/:id': { scope: 'pipelines:read' },
    'PATCH /pipelines/:id': { scope: 'pipelines:write' },
    'POST /pipelines/:id/pause': { scope: 'pipelines:write' },
    'POST /pipelines/:id/resume': { scope: 'pipelines:write' },
    'POST /pipelines/:id/runs': { scope: 'runs:write', bucket: 'pipeline-runs' },
    'GET /pipelines/:id/runs': { scope: 'runs:read' },
    'GET /pipelines/:id/runs/:run_id': { scope: 'runs:read' },
    'POST /pipelines/:id/runs/:run_id/cancel': { scope: 'runs:write' },
    'POST /pipelines/:id/runs/:run_id/retry': { scope: 'runs:write', bucket: 'pipeline-runs' },
    'GET /pipelines/:id/runs/:run_id/logs': { scope: 'runs:read' },
    'GET /pipelines/:id/stats/series': { scope: 'runs:read' },
    'GET /connectors': { scope: 'pipelines:read' },
    'POST /connectors/check': { scope: 'pipelines:write' },
    ...WEBHOOK_ENDPOINT_ROUTES,
  },
} as const satisfies Record<ServiceName, Record<RouteKey, RouteSpec>>;

/** The admin API's prefix (contract section 3); the gateway answers it itself. */
export const ADMIN_PREFIX = '/admin/v1';

/** What an admin route needs: the admin token (contract section 3), no workspace key or scope. */
export interface AdminRouteSpec {
  auth: 'admin-token';
}

/** The admin API's routes (contract sections 3, 16 and 20); the gateway mounts exactly these, and tests walk them. */
export const ADMIN_ROUTES = {
  'POST /workspaces': { auth: 'admin-token' },
  'GET /workspaces': { auth: 'admin-token' },
  'GET /workspaces/:id': { auth: 'admin-token' },
  'POST /workspaces/:id/api-keys': { auth: 'admin-token' },
  'GET /workspaces/:id/api-keys': { auth: 'admin-token' },
  'GET /workspaces/:id/api-keys/:key_id': { auth: 'admin-token' },
  'PATCH /workspaces/:id/api-keys/:key_id': { auth: 'admin-token' },
  'DELETE /workspaces/:id/api-keys/:key_id': { auth: 'admin-token' },
  'POST /workspaces/:id/api-keys/:key_id/roll': { auth: 'admin-token' },
  'GET /workspaces/:id/api-keys/:key_id/usage': { auth: 'admin-token' },
  'GET /workspaces/:id/quotas': { auth: 'admin-token' },
  'PATCH /workspaces/:id/quotas': { auth: 'admin-token' },
} as const satisfies Record<RouteKey, AdminRouteSpec>;
export type AdminRouteKey = keyof typeof ADMIN_ROUTES;

export type RoutesOf<S extends ServiceName> = keyof (typeof ROUTES)[S] & RouteKey;

/** Splits a route key into method and path. */
export function parseRouteKey(key: string): { method: string; path: string } {
  const space = key.indexOf(' ');
  return { method: key.slice(0, space), path: key.slice(space + 1) };
}
