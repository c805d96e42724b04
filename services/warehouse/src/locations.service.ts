import { conflict, timestamp, type WorkspaceId } from '@platform/core';
import type { Location } from './warehouse.resources';
import { takenField, type Location as LocationRow, type WarehouseStore } from './warehouse.store';

/** A location as the API returns it. */
export function renderLocation(location: LocationRow): Location {
  return { id: location.id, name: location.name, code: location.code, created_at: timestamp(location.createdAt) };
}

/** Creates a location; its code is unique in the workspace (the unique index decides, 409 `taken`). */
export async function createLocation(store: WarehouseStore, workspaceId: WorkspaceId, input: { name: string; code: string }): Promise<LocationRow> {
  try {
    return await store.createLocation(workspaceId, input);
  } catch (err) {
    if (takenField(err) === 'code') {
      throw conflict('The location code is already taken.', undefined, [
        { in: 'body', field: 'code', code: 'taken', message: 'is already used by another location of this workspace' },
      ]);
    }
    throw err;
  }
}
