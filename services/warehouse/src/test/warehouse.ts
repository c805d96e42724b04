import { serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import type { Database } from '../database';
import type { WarehouseLimits } from '../workspace-limits';
import { startTestApp } from './app';

/**
 * Starts the app for one test file (beforeAll / afterAll), with `limits` per workspace if given.
 * `client()` calls it as the gateway would, for a fresh workspace each time, so tests never see
 * each other's data.
 */
export function useTestApp(options: { limits?: WarehouseLimits } = {}) {
  let app: Awaited<ReturnType<typeof startTestApp>>;
  beforeAll(async () => {
    app = await startTestApp(options);
  });
  afterAll(async () => {
    await app.close();
  });
  return {
    get server() {
      return app.server;
    },
    get db() {
      return app.db;
    },
    client: (scopes: readonly string[] | null = null): ServiceClient => serviceClient('warehouse', app.server, testIdentity(scopes)),
  };
}

let serial = 0;
/** A sku no other item of the test run uses. */
export function uniqueSku(label = 'SKU'): string {
  serial += 1;
  return `${label}-${process.pid}-${serial}`;
}

/** Creates an item through the API and returns its body. */
export async function createItem(c: ServiceClient, fields: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await c.post('/items', { sku: uniqueSku(), name: 'Widget', ...fields });
  if (res.status !== 201) throw new Error(`POST /items gave ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates a location through the API and returns its body. */
export async function createLocation(c: ServiceClient, code = uniqueSku('LOC')): Promise<Record<string, any>> {
  const res = await c.post('/locations', { name: `Aisle ${code}`, code });
  if (res.status !== 201) throw new Error(`POST /locations gave ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Gives an item stock through the API: at its default location, or at `locationId` (null: the unassigned level). */
export async function receive(c: ServiceClient, itemId: string, delta: number, locationId?: string | null): Promise<void> {
  const res = await c.post(`/items/${itemId}/stock-adjustments`, { delta, reason: 'receipt', ...(locationId !== undefined && { location_id: locationId }) });
  if (res.status !== 201) throw new Error(`stock adjustment gave ${res.status}: ${JSON.stringify(res.body)}`);
}

/** An item's levels through the API, as `{ [location_id or "null"]: [on_hand, reserved, available] }`, and its quantity. */
export async function stockOf(c: ServiceClient, itemId: string): Promise<{ quantity: number; levels: Record<string, [number, number, number]> }> {
  const res = await c.get(`/items/${itemId}/stock`);
  if (res.status !== 200) throw new Error(`GET stock gave ${res.status}: ${JSON.stringify(res.body)}`);
  const levels = Object.fromEntries(
    (res.body.levels as { location_id: string | null; on_hand: number; reserved: number; available: number }[]).map((l) => [
      String(l.location_id),
      [l.on_hand, l.reserved, l.available] as [number, number, number],
    ]),
  );
  return { quantity: res.body.quantity, levels };
}

/** Reserves through the API and returns the reservation. */
export async function reserve(c: ServiceClient, itemId: string, fields: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await c.post(`/items/${itemId}/reservations`, fields);
  if (res.status !== 201) throw new Error(`POST reservations gave ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * Moves a reservation `seconds` into the past (its creation, change and expiry alike): the clock as
 * the reservation sees it, without waiting for it.
 */
export async function backdate(db: Database, reservationId: string, seconds: number): Promise<void> {
  await db.$executeRaw`
    UPDATE "reservations" SET "created_at" = "created_at" - make_interval(secs => ${seconds}), "updated_at" = "updated_at" - make_interval(secs => ${seconds}),
           "expires_at" = "expires_at" - make_interval(secs => ${seconds})
     WHERE "id" = ${reservationId}::uuid`;
}

/** Every level of a workspace satisfies on_hand >= reserved >= 0, and each item's quantity is the sum of its levels' on_hand (read in the database). */
export async function levelInvariants(db: Database, workspaceId: string): Promise<string[]> {
  const rows = await db.$queryRaw<{ problem: string }[]>`
    SELECT format('level %s/%s: on_hand %s, reserved %s', "item_id", "location_id", "on_hand", "reserved") AS "problem"
      FROM "stock_levels" WHERE "workspace_id" = ${workspaceId}::uuid AND NOT ("on_hand" >= "reserved" AND "reserved" >= 0)
    UNION ALL
    SELECT format('item %s: quantity %s, levels %s', i."id", i."quantity", COALESCE(sum(l."on_hand"), 0)) FROM "items" i
      LEFT JOIN "stock_levels" l ON l."item_id" = i."id"
     WHERE i."workspace_id" = ${workspaceId}::uuid GROUP BY i."id" HAVING i."quantity" <> COALESCE(sum(l."on_hand"), 0)`;
  return rows.map((row) => row.problem);
}

/** The outbox rows of one workspace, oldest first. */
export async function outbox(db: Database, c: ServiceClient): Promise<{ type: string; data: any }[]> {
  const rows = await db.outboxEvent.findMany({ where: { workspaceId: c.identity.workspaceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return rows.map((row) => ({ type: row.type, data: row.data }));
}

export const RFC3339_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
