import { conflict, quotaExceeded, type FieldError, type WorkspaceId } from '@platform/core';
import { takenField, type Location as LocationRow, type WarehouseStore } from './warehouse.store';

export { renderLocation } from './warehouse.render';

/**
 * Creates a location; its code is unique in the workspace (the unique index decides, 409 `taken`),
 * and the workspace holds at most `limit` locations (409 `quota_exceeded`).
 */
export async function createLocation(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  input: { name: string; code: string },
  limit: number,
): Promise<LocationRow> {
  try {
    const created = await store.createLocation(workspaceId, input, limit);
    if ('refused' in created) throw quotaExceeded(created.quota, created.limit);
    return created;
  } catch (err) {
    if (takenField(err) === 'code') {
      throw conflict('The location code is already taken.', undefined, [
        { in: 'body', field: 'code', code: 'taken', message: 'is already used by another location of this workspace' },
      ]);
    }
    throw err;
  }
}

/** 400 `not_found` on `field` when `locationId` names no location of the workspace (null and absent name none). */
export async function locationErrors(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  locationId: string | null | undefined,
  field = 'location_id',
): Promise<FieldError[]> {
  // Locations are never deleted, so a location checked here still exists at the write.
  if (!locationId || (await store.locationExists(workspaceId, locationId))) return [];
  return [{ in: 'body', field, code: 'not_found', message: 'is not a location of this workspace' }];
}
