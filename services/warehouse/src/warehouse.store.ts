import { afterCursor, LIST_ORDER, outboxEvent, type Cursor, type WorkspaceId } from '@platform/core';
import type { Database } from './database';
import {
  AdjustmentReason,
  Prisma,
  type Item,
  type Location,
  type Movement,
  type StockAdjustment,
} from './generated/prisma/client';
import { INT4_MAX, type ItemFields, type Metadata } from './item-input';

export { AdjustmentReason };
export type { Item, Location, Movement, StockAdjustment };
export type OutboxRow = ReturnType<typeof outboxEvent>;

/** The unique indexes whose violation is a client's 409 `taken`, by the body field they guard. */
const TAKEN_FIELD_BY_INDEX: Record<string, string> = {
  items_workspace_id_sku_key: 'sku',
  locations_workspace_id_code_key: 'code',
};

/** The body field whose unique index a write violated (Prisma P2002), if any. */
export function takenField(err: unknown): string | undefined {
  if (!(err instanceof Prisma.PrismaClientKnownRequestError) || err.code !== 'P2002') return undefined;
  const meta = err.meta as { driverAdapterError?: { cause?: { constraint?: { index?: string } } } } | undefined;
  const index = meta?.driverAdapterError?.cause?.constraint?.index;
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

/** Every query of the warehouse; each takes the workspace, so no query can forget it. */
function queries(db: Prisma.TransactionClient) {
  return {
    createLocation(workspaceId: WorkspaceId, data: { name: string; code: string }): Promise<Location> {
      return db.location.create({ data: { workspaceId, ...data } });
    },

    async locationExists(workspaceId: WorkspaceId, id: string): Promise<boolean> {
      return (await db.location.count({ where: { id, workspaceId } })) > 0;
    },

    listLocations(workspaceId: WorkspaceId, page: { after?: Cursor; take: number }): Promise<Location[]> {
      return db.location.findMany({ where: { workspaceId, ...afterCursor(page.after) }, orderBy: [...LIST_ORDER], take: page.take });
    },

    /** Inserts an item; call it in a transaction (its metadata may take a second statement). */
    async createItem(workspaceId: WorkspaceId, fields: ItemFields): Promise<Item> {
      const item = await db.item.create({ data: { workspaceId, ...fields, metadata: fields.metadata } });
      if (!hasProtoKey(fields.metadata)) return item;
      await db.$executeRaw`UPDATE items SET metadata = ${JSON.stringify(fields.metadata)}::jsonb WHERE id = ${item.id}::uuid`;
      return { ...item, metadata: fields.metadata };
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

    /**
     * Writes the changes only if the item is still at `version` (one conditional UPDATE), and
     * increments the version. Returns the updated item, or null when the item has moved on.
     */
    async updateItemAtVersion(workspaceId: WorkspaceId, id: string, version: number, changes: Partial<ItemFields>, now: Date): Promise<Item | null> {
      const rows = await db.item.updateManyAndReturn({
        where: { id, workspaceId, version },
        data: { ...itemData(changes), version: { increment: 1 }, updatedAt: now },
      });
      const item = rows[0];
      if (!item || !hasProtoKey(changes.metadata)) return item ?? null;
      await db.$executeRaw`UPDATE items SET metadata = ${JSON.stringify(changes.metadata)}::jsonb WHERE id = ${item.id}::uuid`;
      return { ...item, metadata: changes.metadata };
    },

    /**
     * Adds `delta` to the quantity in one conditional UPDATE ... RETURNING: of any number of
     * concurrent adjustments none can take the quantity below 0 (or past the integer column).
     * Returns the updated item, or null when the item is unknown or the result is out of range.
     */
    async addToQuantity(workspaceId: WorkspaceId, id: string, delta: number, now: Date): Promise<Item | null> {
      const rows = await db.item.updateManyAndReturn({
        where: { id, workspaceId, quantity: delta < 0 ? { gte: -delta } : { lte: INT4_MAX - delta } },
        data: { quantity: { increment: delta }, version: { increment: 1 }, updatedAt: now },
      });
      return rows[0] ?? null;
    },

    createMovement(
      workspaceId: WorkspaceId,
      data: { itemId: string; fromLocationId: string | null; toLocationId: string | null; quantity: number; reason: string; createdAt: Date },
    ): Promise<Movement> {
      return db.movement.create({ data: { workspaceId, ...data } });
    },

    listMovements(workspaceId: WorkspaceId, itemId: string, page: { after?: Cursor; take: number }): Promise<Movement[]> {
      return db.movement.findMany({ where: { workspaceId, itemId, ...afterCursor(page.after) }, orderBy: [...LIST_ORDER], take: page.take });
    },

    createAdjustment(
      workspaceId: WorkspaceId,
      data: { itemId: string; delta: number; reason: AdjustmentReason; note: string | null; quantityAfter: number; createdAt: Date },
    ): Promise<StockAdjustment> {
      return db.stockAdjustment.create({ data: { workspaceId, ...data } });
    },

    /** Outbox rows for webhooks; written by the transaction that made the change, `data` as JSON text (every key kept). */
    async recordEvents(events: OutboxRow[]): Promise<void> {
      if (events.length === 0) return;
      const rows = events.map((e) => Prisma.sql`(${e.id}, ${e.workspaceId}::uuid, ${e.type}, ${JSON.stringify(e.data)}::jsonb, ${e.createdAt})`);
      await db.$executeRaw`INSERT INTO outbox_events (id, workspace_id, type, data, created_at) VALUES ${Prisma.join(rows)}`;
    },
  };
}

export type WarehouseQueries = ReturnType<typeof queries>;

export function warehouseStore(db: Database) {
  return {
    ...queries(db),
    /** Runs `work` in one database transaction: every write in it commits together or not at all. */
    transaction<T>(work: (tx: WarehouseQueries) => Promise<T>): Promise<T> {
      return db.$transaction((tx) => work(queries(tx)));
    },
  };
}
export type WarehouseStore = ReturnType<typeof warehouseStore>;
