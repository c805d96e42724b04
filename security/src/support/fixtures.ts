import { SERVICES, type ServiceName } from '@platform/core';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { sleep, type Answer } from './http';
import { expectStatus, type Battlefield, type Tenant } from './platform';
import { idSourcesOf, operationOf, routeName, type Route } from './routes';

/** A public address (example.com's) for webhook endpoints; endpoints are created disabled, so nothing is ever sent to it. */
export const PUBLIC_WEBHOOK_URL = 'https://93.184.215.14/hooks/security';

/**
 * One tenant's resources of every kind, two of each where a list needs a second page, keyed by
 * where a path parameter takes its value from (`idSourcesOf`): `events:tickets`, `pipelines:runs`...
 * The first id of each source belongs to the first of its parent (ticket 0 of event 0, run 0 of pipeline 0).
 */
export interface Fixtures {
  tenant: Tenant;
  ids: Record<string, string[]>;
  /** The token of the key `admin:api-keys` names: a key the battery may lose, apart from the tenant's own. */
  victimToken: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function created(answer: Answer, what: string): string {
  return expectStatus(answer, 201, what).json.id as string;
}

async function finishedRun(tenant: Tenant, pipelineId: string, runId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const run = await tenant.call('GET', `/pipelines/v3/pipelines/${pipelineId}/runs/${runId}`);
    if (['succeeded', 'failed', 'cancelled'].includes(run.json?.status)) return;
    if (Date.now() > deadline) throw new Error(`run ${runId} of ${tenant.name} did not end within 60 s: ${run.text}`);
    await sleep(100);
  }
}

export async function createFixtures(field: Battlefield, tenant: Tenant): Promise<Fixtures> {
  const t = tenant.name;
  const ids: Record<string, string[]> = {};
  const add = (source: string, id: string) => (ids[source] ??= []).push(id);
  const post = (path: string, body: unknown) => tenant.call('POST', path, body);

  for (let i = 0; i < 2; i++) {
    add('events:events', created(await post('/events/v0/events', { name: `${t} event ${i}`, starts_at: '2030-06-01T20:00:00.000Z' }), 'event'));
  }
  for (let i = 0; i < 2; i++) {
    add(
      'events:tickets',
      created(await post(`/events/v0/events/${ids['events:events']![0]}/tickets`, { holder_name: `${t} holder ${i}`, metadata: { seat: `A-${i}` } }), 'ticket'),
    );
  }

  // Ticket 0 validated and undone: two check-ins (a history with a second page), issued again.
  const ticket = `/events/v0/tickets/${ids['events:tickets']![0]}`;
  expectStatus(await post(`${ticket}/validate`, { gate: 'security' }), 200, 'validation');
  expectStatus(await post(`${ticket}/unvalidate`, { reason: `${t} undo` }), 200, 'undo');

  for (let i = 0; i < 2; i++) {
    add('warehouse:locations', created(await post('/warehouse/v1/locations', { name: `${t} location ${i}`, code: `${t.toUpperCase()}-L${i}` }), 'location'));
  }
  for (let i = 0; i < 2; i++) {
    const body = {
      sku: `${t}-SKU-${i}`,
      name: `${t} item ${i}`,
      category: 'security',
      min_stock: 1,
      location_id: ids['warehouse:locations']![0],
      metadata: { owner: t },
    };
    add('warehouse:items', created(await post('/warehouse/v1/items', body), 'item'));
  }
  const item = `/warehouse/v1/items/${ids['warehouse:items']![0]}`;
  expectStatus(await post(`${item}/stock-adjustments`, { delta: 10, reason: 'receipt' }), 201, 'stock adjustment');
  // Two location changes: two movements, so the movement list has a second page.
  expectStatus(await tenant.call('PATCH', item, { location_id: ids['warehouse:locations']![1] }), 200, 'move item');
  expectStatus(await tenant.call('PATCH', item, { location_id: ids['warehouse:locations']![0] }), 200, 'move item back');
  // Two reservations (a list with a second page), long-lived: B's data must not change while the battery runs.
  for (let i = 0; i < 2; i++) {
    add(
      'warehouse:reservations',
      created(await post(`${item}/reservations`, { quantity: 1, expires_in_seconds: 2_592_000, reference: `${t} order ${i}` }), 'reservation'),
    );
  }

  for (let i = 0; i < 2; i++) {
    const body = {
      name: `${t} pipeline ${i}`,
      source: { connector: 'sample', config: { records: 5, seed: i } },
      destination: { connector: 'postgres', config: { table: `security_${t}` } },
    };
    add('pipelines:pipelines', created(await post('/pipelines/v3/pipelines', body), 'pipeline'));
  }
  const pipeline = ids['pipelines:pipelines']![0]!;
  for (let i = 0; i < 2; i++) {
    const run = expectStatus(await post(`/pipelines/v3/pipelines/${pipeline}/runs`, { trigger: 'manual' }), 202, 'run');
    add('pipelines:runs', run.json.id);
    await finishedRun(tenant, pipeline, run.json.id);
  }

  for (const [service, { prefix }] of Object.entries(SERVICES) as [ServiceName, (typeof SERVICES)[ServiceName]][]) {
    for (let i = 0; i < 2; i++) {
      add(
        `${service}:webhook-endpoints`,
        created(await post(`${prefix}/webhook-endpoints`, { url: PUBLIC_WEBHOOK_URL, events: ['*'], enabled: false }), `${service} webhook endpoint`),
      );
    }
    add(`${service}:deliveries`, await deliveryRecord(field, service, tenant.workspaceId, ids[`${service}:webhook-endpoints`]![0]!));
  }

  add('admin:workspaces', tenant.workspaceId);
  const victim = expectStatus(await field.admin('POST', `/admin/v1/workspaces/${tenant.workspaceId}/api-keys`, { name: `${t} victim` }), 201, 'victim key');
  add('admin:api-keys', victim.json.id);
  return { tenant, ids, victimToken: victim.json.token };
}

/**
 * A delivery record of a disabled endpoint, written into the service's database as the delivery
 * worker writes one: the endpoints send nothing (no address of the battery's is reachable or may be
 * reached), so no attempt can make one. A resend of it is refused (409, the endpoint is disabled).
 */
async function deliveryRecord(field: Battlefield, service: ServiceName, workspaceId: string, endpointId: string): Promise<string> {
  const client = new pg.Client({ connectionString: field.platform.databaseUrls[service] });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO "webhook_deliveries" ("workspace_id", "endpoint_id", "event_id", "event_type", "attempt", "status", "response_status", "error")
       VALUES ($1::uuid, $2::uuid, 'evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W', 'item.created', 1, 'failed', NULL, 'not sent: the endpoint is disabled')
       RETURNING "id"`,
      [workspaceId, endpointId],
    );
    return rows[0]!.id;
  } finally {
    await client.end();
  }
}

/** The path parameter values of a route from these fixtures; throws when the map has no source for one. */
export function idsFor(fixtures: Fixtures, route: Route): string[] {
  return idSourcesOf(route).map((source) => {
    const id = fixtures.ids[source]?.[0];
    if (!id) throw new Error(`${routeName(route)}: no id source "${source}" in the battery's fixture map (security/src/support/fixtures.ts)`);
    return id;
  });
}

/**
 * Ids inside request bodies, by field (array indices left out): where a valid value comes from.
 * `null`: any UUID will do (it names nothing of a workspace).
 */
export const BODY_ID_FIELDS: Record<string, string | null> = {
  location_id: 'warehouse:locations',
  from_location_id: 'warehouse:locations',
  event_id: 'events:events',
  'scans.ticket_id': 'events:tickets',
  'scans.validator_id': null,
  'items.id': 'warehouse:items',
  validator_id: null,
};

/** Fields whose value must be unique in a workspace: each template gets a fresh one. */
const UNIQUE_FIELDS = new Set(['sku', 'code']);

let counter = 0;

/** Every UUID string in a body, with its field path (indices included). */
export function uuidFields(body: unknown, path: (string | number)[] = []): { path: (string | number)[]; field: string }[] {
  if (typeof body === 'string') return UUID.test(body) ? [{ path, field: path.filter((p) => typeof p === 'string').join('.') }] : [];
  if (Array.isArray(body)) return body.flatMap((v, i) => uuidFields(v, [...path, i]));
  if (body && typeof body === 'object') return Object.entries(body).flatMap(([k, v]) => uuidFields(v, [...path, k]));
  return [];
}

/**
 * A valid request body for a route: the example its OpenAPI document gives, with the ids in it
 * replaced by this tenant's and unique fields made unique. Undefined for a route without a body.
 */
export function templateBody(fixtures: Fixtures, route: Route, documents: Record<string, any>): unknown {
  if (route.service === 'admin') return ADMIN_TEMPLATES[`${route.method} ${route.path}`];
  const operation = operationOf(documents, route);
  if (!operation) throw new Error(`${routeName(route)} is missing from the service's OpenAPI document`);
  if (!operation.hasBody) return undefined;
  let body: any = structuredClone(operation.bodyExample ?? {});
  if (route.path === '/webhook-endpoints' && route.method === 'POST') body = { ...body, url: PUBLIC_WEBHOOK_URL, enabled: false };
  const n = ++counter;
  for (const field of UNIQUE_FIELDS) if (typeof body[field] === 'string') body[field] = `${body[field]}-${fixtures.tenant.name}-${n}`;
  for (const { path, field } of uuidFields(body)) {
    if (!(field in BODY_ID_FIELDS))
      throw new Error(`${routeName(route)}: the example's UUID field "${field}" has no source in BODY_ID_FIELDS (security/src/support/fixtures.ts)`);
    const source = BODY_ID_FIELDS[field];
    setAt(body, path, source === null || source === undefined ? randomUUID() : fixtures.ids[source]![0]!);
  }
  return body;
}

function setAt(body: any, path: (string | number)[], value: unknown): void {
  let at = body;
  for (const key of path.slice(0, -1)) at = at[key];
  at[path[path.length - 1]!] = value;
}

const ADMIN_TEMPLATES: Record<string, unknown> = {
  'POST /workspaces': { name: 'security workspace' },
  'POST /workspaces/:id/api-keys': { name: 'security key', scopes: ['events:read'], expires_at: '2099-01-01T00:00:00.000Z' },
};
