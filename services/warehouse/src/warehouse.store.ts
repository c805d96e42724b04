import { randomUUID } from 'node:crypto';
import { afterCursor, LIST_ORDER, workspaceScoped, type Cursor, type WorkspaceId } from '@platform/core';
import { recordOutboxEvents, webhooksStore, type OutboxEntry } from '@platform/webhooks';
import type { Database } from './database';
import { AdjustmentReason, Prisma, type Item, type Location, type Movement, type Reservation, type StockAdjustment } from './generated/prisma/client';
import { type ItemFields, type Metadata } from './item-input';
import { ITEM, moveDefaultLevel, stockStore } from './stock.store';
import { renderItem, renderMovement } from './warehouse.render';
import type { LimitReached } from './workspace-limits';

export { AdjustmentReason };
export type { Item, Location, Movement, Reservation, StockAdjustment };

/** The reason of the movement a changed default location writes. */
export const DEFAULT_LOCATION_CHANGED = 'default_location_changed';

/** The unique indexes whose violation is a client's 409 `taken`, by the body field they guard. */
const TAKEN_FIELD_BY_INDEX: Record<string, string> = {
  items_workspace_id_sku_key: 'sku',
  locations_workspace_id_code_key: 'code',
};

/** The body field whose unique index a write violated (Prisma P2002; P2010 from a raw statement), if any. */
export function takenField(err: unknown): string | undefined {
  if (!(err instanceof Prisma.PrismaClientKnownRequestError) || (err.code !== 'P2002' && err.code !== 'P2010')) return undefined;
  const meta = err.meta as { driverAdapterError?: { cause?: { kind?: string; constraint?: { index?: string } } } } | undefined;
  const cause = meta?.driverAdapterError?.cause;
  if (err.code === 'P2010' && cause?.kind !== 'UniqueConstraintViolation') return undefined;
  const index = cause?.constraint?.index;
  return index ? TAKEN_FIELD_BY_INDEX[index] : undefined;
}

/** The stored metadata; only flat string maps are ever written. */
export function metadataOf(item: Item): Metadata {
  return item.metadata as Metadata;
}

/**
 * Prisma builds JSON values by assigning keys into a fresh object, which silently drops a
 * `__proto__` key; metadata holding one is written again as JSON text, exactly as sent.
 */
function hasProtoKey(metadata: Metadata | undefined): metadata is Metadata {
  return metadata !== undefined && Object.hasOwn(metadata, '__proto__');
}

function itemData(fields: Partial<ItemFields>) {
  const { metadata, ...rest } = fields;
  return { ...rest, ...(metadata !== undefined ? { metadata: metadata as Prisma.InputJsonObject } : {}) };
}

/** The records `workspace_usage` counts, by column. */
type Counted = 'items' | 'locations';

/**
 * The statement that adds `n` to the workspace's count of `counted` if the result stays within
 * `limit`, `RETURNING 1` when it did: an upsert whose update is conditional, so under any number of
 * concurrent creates (each waits for the row's lock, then judges the count as committed) none passes
 * the limit. It goes first in the create's insert (a CTE, the insert only `WHERE EXISTS` its row):
 * nothing is written when it refuses, and a create that fails (a taken sku or code) undoes it. The
 * row stays locked to the commit, so the creates of one workspace follow one another: a few
 * milliseconds each, far below what the rate limits let one workspace send.
 */
function countCreated(workspaceId: WorkspaceId, counted: Counted, n: number, limit: number): Prisma.Sql {
  const column = Prisma.raw(`"${counted}"`);
  return Prisma.sql`
    INSERT INTO "workspace_usage" AS u ("workspace_id", ${column}) SELECT ${workspaceId}::uuid, ${n}::int WHERE ${n}::int <= ${limit}::int
    ON CONFLICT ("workspace_id") DO UPDATE SET ${column} = u.${column} + excluded.${column}
     WHERE u.${column}::bigint + excluded.${column} <= ${limit}::int
    RETURNING 1`;
}

const LOCATION = Prisma.sql`"id", "workspace_id" AS "workspaceId", "name", "code", "created_at" AS "createdAt"`;

/** Every query of the warehouse; each takes the workspace, so no query can forget it. */
function queries(db: Database) {
  return {
    /**
     * Inserts a location unless the workspace already holds `limit`: one statement, the count first
     * and the insert only if it was counted; a taken code (P2002) undoes both.
     */
    async createLocation(workspaceId: WorkspaceId, data: { name: string; code: string }, limit: number): Promise<Location | LimitReached> {
      const [location] = await db.$queryRaw<Location[]>`
        WITH "counted" AS (${countCreated(workspaceId, 'locations', 1, limit)})
        INSERT INTO "locations" ("id", "workspace_id", "name", "code")
        SELECT ${randomUUID()}::uuid, ${workspaceId}::uuid, ${data.name}, ${data.code} WHERE EXISTS (SELECT 1 FROM "counted")
        RETURNING ${LOCATION}`;
      return location ?? { refused: 'limit_reached', quota: 'locations', limit };
    },

    async locationExists(workspaceId: WorkspaceId, id: string): Promise<boolean> {
      return (await db.location.count({ where: { id, workspaceId } })) > 0;
    },

    listLocations(workspaceId: WorkspaceId, page: { after?: Cursor; take: number }): Promise<Location[]> {
      return db.location.findMany({ where: { workspaceId, ...afterCursor(page.after) }, orderBy: [...LIST_ORDER], take: page.take });
    },

    findItem(workspaceId: WorkspaceId, id: string): Promise<Item | null> {
      return db.item.findFirst({ where: { id, workspaceId } });
    },

    listItems(workspaceId: WorkspaceId, filter: { sku?: string; category?: string; after?: Cursor; take: number }): Promise<Item[]> {
      return db.item.findMany({
        where: {
          workspaceId,
          ...(filter.sku !== undefined ? { sku: filter.sku } : {}),
          ...(filter.category !== undefined ? { category: filter.category } : {}),
          ...afterCursor(filter.after),
        },
        orderBy: [...LIST_ORDER],
        take: filter.take,
      });
    },

    listMovements(workspaceId: WorkspaceId, itemId: string, page: { after?: Cursor; take: number }): Promise<Movement[]> {
      return db.movement.findMany({ where: { workspaceId, itemId, ...afterCursor(page.after) }, orderBy: [...LIST_ORDER], take: page.take });
    },
  };
}

/**
 * Inserts an item if the workspace's count of items stays within `limit`, in one statement (the
 * count first, the insert only if it was counted); null, nothing written, when it would pass. The
 * metadata goes in as JSON text, exactly as sent (a `__proto__` key included).
 */
async function insertItem(tx: Prisma.TransactionClient, workspaceId: WorkspaceId, fields: ItemFields, limit: number): Promise<Item | null> {
  const [item] = await tx.$queryRaw<Item[]>`
    WITH "counted" AS (${countCreated(workspaceId, 'items', 1, limit)})
    INSERT INTO "items" AS i ("id", "workspace_id", "sku", "name", "category", "min_stock", "location_id", "metadata")
    SELECT ${randomUUID()}::uuid, ${workspaceId}::uuid, ${fields.sku}, ${fields.name}, ${fields.category}, ${fields.minStock}::int, ${fields.locationId}::uuid,
           ${JSON.stringify(fields.metadata)}::jsonb
     WHERE EXISTS (SELECT 1 FROM "counted")
    RETURNING ${ITEM}`;
  return item ?? null;
}

/**
 * Writes the changes only if the item is still at `version` (one conditional UPDATE), and
 * increments the version. Returns the updated item, or null when the item has moved on.
 */
async function updateAtVersion(
  tx: Prisma.TransactionClient,
  workspaceId: WorkspaceId,
  id: string,
  version: number,
  changes: Partial<ItemFields>,
  now: Date,
): Promise<Item | null> {
  const rows = await tx.item.updateManyAndReturn({
    where: { id, workspaceId, version },
    data: { ...itemData(changes), version: { increment: 1 }, updatedAt: now },
  });
  const item = rows[0];
  if (!item || !hasProtoKey(changes.metadata)) return item ?? null;
  await tx.$executeRaw`UPDATE items SET metadata = ${JSON.stringify(changes.metadata)}::jsonb WHERE id = ${item.id}::uuid`;
  return { ...item, metadata: changes.metadata };
}

/**
 * The warehouse's queries and writes. Every write that changes an item is one transaction with its
 * `item.*` outbox events, each rendered as the API renders the resource.
 */
export function warehouseStore(db: Database) {
  return workspaceScoped({
    ...queries(db),
    ...stockStore(db),

    /**
     * Inserts an item (quantity 0, version 1) with its `item.created` event, unless the workspace
     * already holds `limit` items (nothing written); a taken sku (P2002) undoes the count with the rest.
     */
    createItem(workspaceId: WorkspaceId, fields: ItemFields, now: Date, limit: number): Promise<Item | LimitReached> {
      return db.$transaction(async (tx) => {
        const item = await insertItem(tx, workspaceId, fields, limit);
        if (!item) return { refused: 'limit_reached', quota: 'items', limit } as const;
        await recordOutboxEvents(tx, [{ type: 'item.created', workspaceId, data: renderItem(item) }], now);
        return item;
      });
    },

    /**
     * Applies `changes` to `current` if it is still at its version, with `item.updated`; a changed
     * location also moves the old default level to the new one and writes one movement with
     * `item.location_changed`. Null when the version moved on.
     */
    updateItemAtVersion(workspaceId: WorkspaceId, current: Item, changes: Partial<ItemFields>, now: Date): Promise<Item | null> {
      return db.$transaction(async (tx) => {
        const item = await updateAtVersion(tx, workspaceId, current.id, current.version, changes, now);
        if (!item) return null;
        const events: OutboxEntry[] = [{ type: 'item.updated', workspaceId, data: renderItem(item) }];
        if (changes.locationId !== undefined) {
          // The conditional update holds the item's lock, which every stock write takes first.
          const moved = await moveDefaultLevel(tx, workspaceId, item.id, current.locationId, item.locationId, now);
          const movement = await tx.movement.create({
            data: {
              workspaceId,
              itemId: item.id,
              fromLocationId: current.locationId,
              toLocationId: item.locationId,
              quantity: moved,
              reason: DEFAULT_LOCATION_CHANGED,
              createdAt: now,
            },
          });
          events.push({ type: 'item.location_changed', workspaceId, data: renderMovement(movement) });
        }
        await recordOutboxEvents(tx, events, now);
        return item;
      });
    },
  });
}
export type WarehouseStore = ReturnType<typeof warehouseStore>;

/** The warehouse service's stores over one client: what its app is given instead of the client. */
export function warehouseServiceStores(db: Database) {
  return { warehouse: warehouseStore(db), webhooks: webhooksStore(db), ping: () => db.$queryRaw`SELECT 1` };
}
export type WarehouseServiceStores = ReturnType<typeof warehouseServiceStores>;
