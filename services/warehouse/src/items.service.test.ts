import { randomUUID } from 'node:crypto';
import type { WorkspaceId } from '@platform/core';
import { updateItems } from './items.service';
import type { Item, WarehouseStore } from './warehouse.store';

function itemRow(id: string): Item {
  const now = new Date('2024-12-01T09:30:00.000Z');
  return {
    id,
    workspaceId: 'w',
    sku: `SKU-${id}`,
    name: 'Widget',
    category: null,
    minStock: null,
    locationId: null,
    metadata: {},
    quantity: 0,
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}

/** A store whose database fails for one item: a broken row, a lost connection. */
function storeFailingFor(failing: Map<string, Error>, applied: string[]): WarehouseStore {
  return {
    findItem: async (_w: WorkspaceId, id: string) => itemRow(id),
    locationExists: async () => true,
    updateItemAtVersion: async (_w: WorkspaceId, current: Item, changes: Partial<Item>) => {
      const error = failing.get(current.id);
      if (error) throw error;
      applied.push(current.id);
      return { ...current, ...changes, version: current.version + 1 };
    },
  } as unknown as WarehouseStore;
}

describe("bulk: a database error is the entry's result, never a 500 after others were applied", () => {
  test("an unexpected error is that entry's 500, an outage its 503; the other entries are applied", async () => {
    const [a, broken, down, d] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const applied: string[] = [];
    const failing = new Map([
      [broken, new Error('invalid byte sequence for encoding "UTF8"')],
      [down, Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ]);
    const logged: unknown[] = [];
    const logger = { child: () => ({ error: (...args: unknown[]) => logged.push(args) }) } as never;
    const results = await updateItems(
      storeFailingFor(failing, applied),
      'w' as WorkspaceId,
      [a, broken, down, d].map((id) => ({ id, name: 'Renamed' })),
      logger,
    );
    expect(results.map((r) => [r.id, r.status])).toEqual([
      [a, 200],
      [broken, 500],
      [down, 503],
      [d, 200],
    ]);
    expect(results[1]).toEqual({ id: broken, status: 500, error: { code: 'internal_error', message: 'Something went wrong on our side.' } });
    expect(JSON.stringify(results[1])).not.toContain('UTF8');
    expect(results[2]).toMatchObject({ error: { code: 'temporarily_unavailable' } });
    expect(applied).toEqual([a, d]);
    expect(logged).toHaveLength(1);
  });
});
