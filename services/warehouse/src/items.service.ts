import { z } from 'zod';
import {
  ApiError,
  conflict,
  errorBody,
  FieldErrors,
  internalError,
  invalidRequest,
  isTransientBackendError,
  isWellFormedText,
  notFound,
  quotaExceeded,
  temporarilyUnavailable,
  textRuleErrors,
  Uuid,
  zodFieldErrors,
  type Logger,
  type WorkspaceId,
} from '@platform/core';
import { ifMatchAccepts, ItemPatch, itemChanges, mergeMetadata, metadataErrors, NewItem, parseFields, type IfMatch, type ItemFields } from './item-input';
import { locationErrors } from './locations.service';
import { renderItem } from './warehouse.render';
import type { BulkResult } from './warehouse.resources';
import { metadataOf, takenField, type Item as ItemRow, type Movement as MovementRow, type WarehouseStore } from './warehouse.store';

export { renderItem, renderMovement } from './warehouse.render';

/**
 * How often a PATCH without If-Match re-reads and retries when a concurrent change (another
 * PATCH, a stock adjustment) moved the version between its read and its conditional update.
 */
const UPDATE_ATTEMPTS = 10;

function skuTaken(): ApiError {
  return conflict('The sku is already taken.', undefined, [
    { in: 'body', field: 'sku', code: 'taken', message: 'is already used by another item of this workspace' },
  ]);
}

function versionConflict(precondition: IfMatch | undefined): ApiError {
  if (!precondition) return conflict('The item kept changing while this update was applied (version conflict); retry.');
  return conflict('The item has changed since the ETag in If-Match (version conflict); read it again and retry.', undefined, [
    { in: 'header', field: 'If-Match', code: 'version_mismatch', message: 'does not match the current ETag of the item' },
  ]);
}

/**
 * Creates an item (quantity 0, version 1) and its `item.created` event; past the workspace's
 * `limit` of items, 409 `quota_exceeded` and nothing written (a taken sku then too).
 */
export async function createItem(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  body: Record<string, unknown>,
  limit: number,
  now = new Date(),
): Promise<ItemRow> {
  const parsed = parseFields(NewItem, body);
  const metadata = mergeMetadata({}, parsed.value.metadata ?? null);
  const errors = parsed.errors;
  errors.addAll([...metadataErrors(metadata), ...(await locationErrors(store, workspaceId, parsed.value.location_id))]);
  if (!parsed.ok || errors.total > 0) throw invalidRequest(errors);
  const { sku, name, category, min_stock, location_id } = parsed.value;
  const fields: ItemFields = { sku, name, category: category ?? null, minStock: min_stock ?? null, locationId: location_id ?? null, metadata };
  let created: Awaited<ReturnType<WarehouseStore['createItem']>>;
  try {
    created = await store.createItem(workspaceId, fields, now, limit);
  } catch (err) {
    throw takenField(err) === 'sku' ? skuTaken() : err;
  }
  if ('refused' in created) throw quotaExceeded(created.quota, created.limit);
  return created;
}

export async function getItem(store: WarehouseStore, workspaceId: WorkspaceId, id: string): Promise<ItemRow> {
  const item = await store.findItem(workspaceId, id);
  if (!item) throw notFound('Item');
  return item;
}

/**
 * Applies a PATCH body to an item. Every problem of the body is reported in one 400, including
 * those that need the stored item (merged metadata) or the database (location of the workspace).
 * The write is one conditional UPDATE on the version that was read: with If-Match a moved version
 * is a 409; without it the patch is re-applied to the fresh item. A changed location writes one
 * movement, and the events, in the same transaction.
 */
export async function updateItem(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  id: string,
  body: Record<string, unknown>,
  precondition?: IfMatch,
): Promise<ItemRow> {
  const parsed = parseFields(ItemPatch, body);
  const locationProblems = await locationErrors(store, workspaceId, parsed.value.location_id);
  for (let attempt = 1; ; attempt++) {
    const current = await store.findItem(workspaceId, id);
    if (!current) {
      if (!parsed.ok) throw invalidRequest(parsed.errors);
      throw notFound('Item');
    }
    const changes = itemChanges({ ...current, metadata: metadataOf(current) }, parsed.value);
    const errors = new FieldErrors();
    errors.addAll(parsed.errors);
    errors.addAll([...locationProblems, ...(changes.metadata ? metadataErrors(changes.metadata) : [])]);
    if (!parsed.ok || errors.total > 0) throw invalidRequest(errors);
    if (precondition && !ifMatchAccepts(precondition, current.version)) throw versionConflict(precondition);
    // Nothing differs from the stored item: no write, no new version, no event.
    if (Object.keys(changes).length === 0) return current;
    const updated = await writeChanges(store, workspaceId, current, changes);
    if (updated) return updated;
    if (precondition || attempt >= UPDATE_ATTEMPTS) throw versionConflict(precondition);
  }
}

async function writeChanges(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  current: ItemRow,
  changes: Partial<ItemFields>,
  now = new Date(),
): Promise<ItemRow | null> {
  try {
    return await store.updateItemAtVersion(workspaceId, current, changes, now);
  } catch (err) {
    throw takenField(err) === 'sku' ? skuTaken() : err;
  }
}

const BulkEntryId = z.object({ id: Uuid });

/** What a PATCH would have answered for an error: the contract's own, 503 for an outage, else 500 (logged). */
function entryError(err: unknown, logger: Logger | undefined): ApiError {
  if (err instanceof ApiError) return err;
  if (isTransientBackendError(err)) return temporarilyUnavailable();
  logger?.error({ err }, 'bulk entry failed');
  return internalError();
}

/**
 * Applies each entry of a bulk request as its own PATCH (own transaction, own events), in order.
 * Whatever goes wrong with one entry (the string rule, validation, 404, 409, a database error) is
 * that entry's result, with the status the PATCH would have had; the others are still applied.
 */
export async function updateItems(store: WarehouseStore, workspaceId: WorkspaceId, entries: unknown[], logger?: Logger): Promise<BulkResult[]> {
  const results: BulkResult[] = [];
  for (const [index, entry] of entries.entries()) {
    const { id, ...fields } = entry as Record<string, unknown>;
    const resultId = typeof id === 'string' && isWellFormedText(id) ? id : null;
    try {
      // The route leaves entries to this function, so one bad string refuses only its own entry.
      const problems = new FieldErrors();
      problems.addAll(textRuleErrors(entry, 'body'));
      const idCheck = BulkEntryId.safeParse(entry);
      if (!idCheck.success || problems.total > 0) {
        problems.addAll(idCheck.success ? [] : zodFieldErrors(idCheck.error, 'body', entry));
        problems.addAll(parseFields(ItemPatch, fields).errors);
        throw invalidRequest(problems);
      }
      results.push({ id: resultId, status: 200, item: renderItem(await updateItem(store, workspaceId, idCheck.data.id, fields)) });
    } catch (err) {
      const apiError = entryError(err, logger && logger.child({ bulk_entry: index }));
      const { request_id: _requestId, ...error } = errorBody(apiError, '').error;
      results.push({ id: resultId, status: apiError.status, error });
    }
  }
  return results;
}

export async function listMovements(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  itemId: string,
  page: Parameters<WarehouseStore['listMovements']>[2],
): Promise<MovementRow[]> {
  await getItem(store, workspaceId, itemId);
  return store.listMovements(workspaceId, itemId, page);
}
