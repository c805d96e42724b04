import { serviceClient, testIdentity, type ServiceClient } from '@platform/testing';
import type { Database } from '../database';
import { startTestApp } from './app';

/**
 * Starts the app for one test file (beforeAll / afterAll). `client()` calls it as the gateway
 * would, for a fresh workspace each time, so tests never see each other's data.
 */
export function useTestApp() {
  let app: Awaited<ReturnType<typeof startTestApp>>;
  beforeAll(async () => {
    app = await startTestApp();
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

/** Gives an item stock through the API. */
export async function receive(c: ServiceClient, itemId: string, delta: number): Promise<void> {
  const res = await c.post(`/items/${itemId}/stock-adjustments`, { delta, reason: 'receipt' });
  if (res.status !== 201) throw new Error(`stock adjustment gave ${res.status}: ${JSON.stringify(res.body)}`);
}

/** The outbox rows of one workspace, oldest first. */
export async function outbox(db: Database, c: ServiceClient): Promise<{ type: string; data: any }[]> {
  const rows = await db.outboxEvent.findMany({ where: { workspaceId: c.identity.workspaceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return rows.map((row) => ({ type: row.type, data: row.data }));
}

export const RFC3339_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
