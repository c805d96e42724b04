import { randomUUID } from 'node:crypto';
import { lockWorkspaceQuota, lockWorkspaceQuotaShared, workspaceScoped, type Cursor, type WorkspaceId } from '@platform/core';
import { recordOutboxEvents, type OutboxEntry } from '@platform/webhooks';
import type { Database } from './database';
import { AdjustmentReason, Prisma, type Item, type Movement, type Reservation, type StockAdjustment } from './generated/prisma/client';
import { crossesBelowMinStock, INT4_MAX } from './item-input';
import { expiresAt, type ReservationStatus } from './reservations';
import type { LevelStock, LocationStockRow } from './stock-levels';
import { renderAdjustment, renderItem, renderReservation, renderTransfer } from './warehouse.render';
import { reservationAdmission, type LimitReached } from './workspace-limits';

type Tx = Prisma.TransactionClient;

/** The reason of the movement a transfer writes. */
export const TRANSFER = 'transfer';

/** Why a stock write changed nothing (besides releasing due reservations, which it keeps). */
export type StockRefusal =
  | { refused: 'item_not_found' }
  | { refused: 'reservation_not_found' }
  | { refused: 'insufficient_stock'; available: number }
  | { refused: 'too_large' }
  | { refused: 'reservation_not_active'; status: ReservationStatus }
  | LimitReached;

export interface AdjustmentInput {
  /** undefined: the item's default location. */
  locationId: string | null | undefined;
  delta: number;
  reason: AdjustmentReason;
  note: string | null;
}

export interface TransferInput {
  fromLocationId: string | null;
  toLocationId: string | null;
  quantity: number;
  note: string | null;
}

export interface ReservationInput {
  /** undefined: the item's default location. */
  locationId: string | null | undefined;
  quantity: number;
  /** From the reservation's creation (the moment its item's lock was granted). */
  expiresInSeconds: number;
  reference: string | null;
}

const MOVEMENT = Prisma.sql`"id", "workspace_id" AS "workspaceId", "item_id" AS "itemId", "from_location_id" AS "fromLocationId", "to_location_id" AS "toLocationId",
  "quantity", "reason", "note", "created_at" AS "createdAt"`;

const RESERVATION = Prisma.sql`"id", "workspace_id" AS "workspaceId", "item_id" AS "itemId", "location_id" AS "locationId", "quantity", "status"::text AS "status",
  "reference", "expires_at" AS "expiresAt", "created_at" AS "createdAt", "updated_at" AS "updatedAt"`;

/** The reserved quantity of level `l` held by active reservations already past their expiry at `now`. */
function dueReserved(now: Date): Prisma.Sql {
  return Prisma.sql`COALESCE((SELECT sum(r."quantity") FROM "reservations" r
     WHERE r."item_id" = l."item_id" AND r."status" = 'active' AND r."expires_at" <= ${now}::timestamptz
       AND r."location_id" IS NOT DISTINCT FROM l."location_id"), 0)::int`;
}

/** An item's columns as Item, from a row named `i`. */
export const ITEM = Prisma.sql`i."id", i."workspace_id" AS "workspaceId", i."sku", i."name", i."category", i."min_stock" AS "minStock", i."location_id" AS "locationId",
  i."metadata", i."quantity", i."version", i."created_at" AS "createdAt", i."updated_at" AS "updatedAt"`;

/**
 * An item as its lock returns it: `nextExpiry` is the earliest `expires_at` of its active
 * reservations; with `countActive`, `activeReservations` is how many reservations of the workspace are
 * active and not yet due (up to the limit), and `connections` the server's max_connections.
 */
type LockedItem = Item & { nextExpiry: Date | null; activeReservations?: number; connections?: number };

/** What a reservation asks of the item's lock statement: its workspace's active reservations, counted up to `limit`. */
export interface CountActive {
  limit: number;
}

/**
 * Locks the item's row for the transaction and returns it. Every write on an item's stock (and
 * the expiry sweeper) takes this lock first, then reservations, then levels: one order, so no two
 * writers wait on each other in a circle, and due reservations are released by one of them only.
 * The lock is held to the commit, so what follows it goes in as few statements as it can.
 *
 * `nextExpiry` is read in the statement's snapshot, which may predate the wait for the lock: it may
 * name a reservation that the transaction waited for just ended (releasing then finds nothing), but
 * misses none that is due when the lock is granted: one created during the wait expires at least
 * 60 s after it, and no transaction waits that long (pool wait plus transaction timeout).
 *
 * `countActive` counts in the same snapshot, taken before the wait for the row (so the hot item's
 * holder does not wait on the count), from the partial index (workspace_id, expires_at) WHERE
 * status = 'active'; as reads judge them, a reservation past its `expires_at` does not count, swept or not.
 */
async function lockItem(
  tx: Tx,
  workspaceId: WorkspaceId,
  itemId: string,
  options: { skipLocked?: boolean; countActive?: CountActive } = {},
): Promise<LockedItem | null> {
  const wait = options.skipLocked ? Prisma.sql`SKIP LOCKED` : Prisma.empty;
  const count = options.countActive
    ? Prisma.sql`, (SELECT count(*) FROM (
          SELECT 1 FROM "reservations" a
           WHERE a."workspace_id" = ${workspaceId}::uuid AND a."status" = 'active' AND a."expires_at" > ${new Date()}::timestamptz
           LIMIT ${options.countActive.limit}::int) s)::int AS "activeReservations",
        current_setting('max_connections')::int AS "connections"`
    : Prisma.empty;
  const [item] = await tx.$queryRaw<LockedItem[]>`
    SELECT ${ITEM}, (SELECT min(r."expires_at") FROM "reservations" r WHERE r."item_id" = i."id" AND r."status" = 'active') AS "nextExpiry" ${count}
      FROM "items" i WHERE i."id" = ${itemId}::uuid AND i."workspace_id" = ${workspaceId}::uuid FOR NO KEY UPDATE OF i ${wait}`;
  return item ?? null;
}

/**
 * Marks the item's active reservations whose `expires_at` has come `expired` (changed at their
 * `expires_at`), takes their quantity off their levels' `reserved` and writes `reservation.expired`
 * for each, in the caller's transaction (which holds the item's lock). The conditional
 * `status = 'active'` makes each expiry happen once, whoever runs it.
 */
async function expireDueReservations(tx: Tx, workspaceId: WorkspaceId, itemId: string, now: Date): Promise<Reservation[]> {
  const expired = await tx.$queryRaw<Reservation[]>`
    WITH "expired" AS (
      UPDATE "reservations" SET "status" = 'expired', "updated_at" = "expires_at"
       WHERE "workspace_id" = ${workspaceId}::uuid AND "item_id" = ${itemId}::uuid AND "status" = 'active' AND "expires_at" <= ${now}::timestamptz
      RETURNING *
    ), "freed" AS (
      UPDATE "stock_levels" l SET "reserved" = l."reserved" - f."quantity", "updated_at" = ${now}::timestamptz
        FROM (SELECT "location_id", sum("quantity")::int AS "quantity" FROM "expired" GROUP BY "location_id") f
       WHERE l."item_id" = ${itemId}::uuid AND l."location_id" IS NOT DISTINCT FROM f."location_id"
    )
    SELECT ${RESERVATION} FROM "expired" ORDER BY "expires_at", "id"`;
  await recordOutboxEvents(
    tx,
    expired.map((reservation) => ({ type: 'reservation.expired', workspaceId, data: renderReservation(reservation) })),
    now,
  );
  return expired;
}

/**
 * Locks the item and releases the reservations due when the lock was granted: what every stock write
 * does first. `now` is that moment, the write's clock from there on: a request that waited for the
 * lock across a reservation's `expires_at` sees it expired, as every read from that instant does.
 * Null when the item is unknown.
 */
export async function lockForStockWrite(
  tx: Tx,
  workspaceId: WorkspaceId,
  itemId: string,
  options: { skipLocked?: boolean; countActive?: CountActive } = {},
): Promise<{ item: Item; now: Date; expired: Reservation[]; active?: { reservations: number; connections: number } } | null> {
  const locked = await lockItem(tx, workspaceId, itemId, options);
  if (!locked) return null;
  const now = new Date();
  const { nextExpiry, activeReservations, connections, ...item } = locked;
  const expired = nextExpiry && nextExpiry.getTime() <= now.getTime() ? await expireDueReservations(tx, workspaceId, itemId, now) : [];
  const active = activeReservations !== undefined && connections !== undefined ? { reservations: activeReservations, connections } : undefined;
  return { item, now, expired, ...(active && { active }) };
}

/**
 * The statement that adds `change` to one level, `RETURNING 1` when it did: its condition is the
 * invariant after the change (`on_hand >= reserved >= 0`, also the table's CHECKs), so of any
 * number of concurrent writers none can oversell. A change that only adds stock creates the level
 * when it is missing; `onlyIf` (SQL) must hold too, for use inside a larger statement.
 */
function levelChange(
  workspaceId: WorkspaceId,
  itemId: string,
  locationId: string | null,
  change: { onHand: number; reserved: number },
  now: Date,
  onlyIf: Prisma.Sql = Prisma.sql`true`,
): Prisma.Sql {
  const { onHand, reserved } = change;
  if (reserved >= 0 && onHand >= reserved) {
    return Prisma.sql`
      INSERT INTO "stock_levels" AS l ("workspace_id", "item_id", "location_id", "on_hand", "reserved", "created_at", "updated_at")
      SELECT ${workspaceId}::uuid, ${itemId}::uuid, ${locationId}::uuid, ${onHand}::int, ${reserved}::int, ${now}::timestamptz, ${now}::timestamptz
       WHERE ${onlyIf}
      ON CONFLICT ("item_id", "location_id") DO UPDATE
         SET "on_hand" = l."on_hand" + excluded."on_hand", "reserved" = l."reserved" + excluded."reserved", "updated_at" = excluded."updated_at"
      RETURNING 1`;
  }
  return Prisma.sql`
    UPDATE "stock_levels" SET "on_hand" = "on_hand" + ${onHand}::int, "reserved" = "reserved" + ${reserved}::int, "updated_at" = ${now}::timestamptz
     WHERE "workspace_id" = ${workspaceId}::uuid AND "item_id" = ${itemId}::uuid AND "location_id" IS NOT DISTINCT FROM ${locationId}::uuid
       AND "on_hand" + ${onHand}::int >= "reserved" + ${reserved}::int AND "reserved" + ${reserved}::int >= 0 AND ${onlyIf}
    RETURNING 1`;
}

/** What a level has available, read under the item's lock after due reservations were released: for a refusal's message. */
async function availableAt(tx: Tx, itemId: string, locationId: string | null): Promise<number> {
  const [level] = await tx.$queryRaw<{ available: number }[]>`
    SELECT "on_hand" - "reserved" AS "available" FROM "stock_levels" WHERE "item_id" = ${itemId}::uuid AND "location_id" IS NOT DISTINCT FROM ${locationId}::uuid`;
  return level?.available ?? 0;
}

/**
 * A stock adjustment in one statement: the level changes by `level` (its condition decides), and
 * only then the item's quantity (the sum of its levels) by `delta` and the adjustment record, with
 * `item.stock_adjusted` and `item.reorder_needed` when the quantity crosses below min_stock (once,
 * not again while it stays below). Null when the level refused. The caller holds the item's lock
 * and checked the upper bound; the CHECKs guard the lower one.
 */
async function adjustLevel(
  tx: Tx,
  workspaceId: WorkspaceId,
  itemId: string,
  change: { locationId: string | null; delta: number; reason: AdjustmentReason; note: string | null },
  level: { onHand: number; reserved: number },
  now: Date,
): Promise<{ adjustment: StockAdjustment; item: Item; events: OutboxEntry[] } | null> {
  const id = randomUUID();
  const [item] = await tx.$queryRaw<Item[]>`
    WITH "level" AS (${levelChange(workspaceId, itemId, change.locationId, level, now)}),
    "item" AS (
      UPDATE "items" SET "quantity" = "quantity" + ${change.delta}::int, "version" = "version" + 1, "updated_at" = ${now}::timestamptz
       WHERE "id" = ${itemId}::uuid AND EXISTS (SELECT 1 FROM "level")
      RETURNING *
    ), "adjustment" AS (
      INSERT INTO "stock_adjustments" ("id", "workspace_id", "item_id", "location_id", "delta", "reason", "note", "quantity_after", "created_at")
      SELECT ${id}::uuid, ${workspaceId}::uuid, ${itemId}::uuid, ${change.locationId}::uuid, ${change.delta}::int, ${change.reason}::"adjustment_reason",
             ${change.note}, i."quantity", ${now}::timestamptz
        FROM "item" i
    )
    SELECT ${ITEM} FROM "item" i`;
  if (!item) return null;
  // Exactly the row the statement inserted.
  const adjustment: StockAdjustment = { id, workspaceId, itemId, ...change, quantityAfter: item.quantity, createdAt: now };
  const events: OutboxEntry[] = [{ type: 'item.stock_adjusted', workspaceId, data: renderAdjustment(adjustment) }];
  if (crossesBelowMinStock(item.minStock, item.quantity - change.delta, item.quantity)) {
    events.push({ type: 'item.reorder_needed', workspaceId, data: renderItem(item) });
  }
  return { adjustment, item, events };
}

/**
 * Moves the old default level's on_hand and reserved, and the active reservations held there, to
 * the new default location (section 18), in the caller's transaction, which holds the item's lock.
 * Returns the on_hand that moved.
 */
export async function moveDefaultLevel(tx: Tx, workspaceId: WorkspaceId, itemId: string, from: string | null, to: string | null, now: Date): Promise<number> {
  // Due when the lock was granted (after `now`, the request's clock), as every stock write judges them.
  await expireDueReservations(tx, workspaceId, itemId, new Date(Math.max(now.getTime(), Date.now())));
  const [moved] = await tx.$queryRaw<{ onHand: number; reserved: number }[]>`
    DELETE FROM "stock_levels" WHERE "workspace_id" = ${workspaceId}::uuid AND "item_id" = ${itemId}::uuid AND "location_id" IS NOT DISTINCT FROM ${from}::uuid
    RETURNING "on_hand" AS "onHand", "reserved"`;
  if (!moved || (moved.onHand === 0 && moved.reserved === 0)) return 0;
  await tx.$queryRaw(levelChange(workspaceId, itemId, to, moved, now));
  await tx.reservation.updateMany({ where: { workspaceId, itemId, locationId: from, status: 'active' }, data: { locationId: to, updatedAt: now } });
  return moved.onHand;
}

/** A reservation's status filter as of `now`: a due active reservation counts as expired. */
function statusFilter(status: ReservationStatus | undefined, now: Date): Prisma.ReservationWhereInput {
  switch (status) {
    case undefined:
      return {};
    case 'active':
      return { status: 'active', expiresAt: { gt: now } };
    case 'expired':
      return { OR: [{ status: 'expired' }, { status: 'active', expiresAt: { lte: now } }] };
    default:
      return { status };
  }
}

/**
 * Stock per location, transfers and reservations (contract section 18). Every write locks the item
 * first, releases its due reservations, then lets one conditional statement per level decide; the
 * records and their events commit in the same transaction. A refusal commits only the releases.
 */
export function stockStore(db: Database) {
  return workspaceScoped({
    /** The item and its levels, read in one snapshot (so `quantity` is their sum); null when the item is unknown. */
    async itemStock(workspaceId: WorkspaceId, itemId: string, now: Date): Promise<{ item: Item; levels: LevelStock[] } | null> {
      const [item, levels] = await db.$transaction(
        [
          db.item.findFirst({ where: { id: itemId, workspaceId } }),
          db.$queryRaw<LevelStock[]>`
            SELECT * FROM (
              SELECT l."location_id" AS "locationId", l."on_hand" AS "onHand", l."reserved" - ${dueReserved(now)} AS "reserved"
                FROM "stock_levels" l WHERE l."workspace_id" = ${workspaceId}::uuid AND l."item_id" = ${itemId}::uuid
            ) s WHERE s."onHand" <> 0 OR s."reserved" <> 0
            ORDER BY s."locationId" NULLS FIRST`,
        ],
        { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead },
      );
      return item ? { item, levels } : null;
    },

    /**
     * One page of a location's non-zero levels in sku order (code points). The cursor names the
     * last item of the page before; the page goes on after that item's sku.
     */
    locationStock(workspaceId: WorkspaceId, locationId: string, page: { after?: Cursor; take: number }, now: Date): Promise<LocationStockRow[]> {
      const after = page.after
        ? Prisma.sql`AND i."sku" COLLATE "C" > (SELECT c."sku" FROM "items" c WHERE c."id" = ${page.after.id}::uuid AND c."workspace_id" = ${workspaceId}::uuid) COLLATE "C"`
        : Prisma.empty;
      return db.$queryRaw<LocationStockRow[]>`
        SELECT * FROM (
          SELECT l."id", l."item_id" AS "itemId", i."sku", l."on_hand" AS "onHand", l."reserved" - ${dueReserved(now)} AS "reserved", l."created_at" AS "createdAt"
            FROM "stock_levels" l JOIN "items" i ON i."id" = l."item_id"
           WHERE l."workspace_id" = ${workspaceId}::uuid AND l."location_id" = ${locationId}::uuid ${after}
        ) s WHERE s."onHand" <> 0 OR s."reserved" <> 0
        ORDER BY s."sku" COLLATE "C" LIMIT ${page.take}::int`;
    },

    findReservation(workspaceId: WorkspaceId, id: string): Promise<Reservation | null> {
      return db.reservation.findFirst({ where: { id, workspaceId } });
    },

    /** An item's reservations, oldest first, with their status as of `now`. */
    listReservations(
      workspaceId: WorkspaceId,
      itemId: string,
      filter: { status?: ReservationStatus; after?: Cursor; take: number },
      now: Date,
    ): Promise<Reservation[]> {
      const after = filter.after;
      return db.reservation.findMany({
        where: {
          workspaceId,
          itemId,
          AND: [
            statusFilter(filter.status, now),
            after
              ? { createdAt: { gte: after.createdAt }, OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }] }
              : {},
          ],
        },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        take: filter.take,
      });
    },

    /** Adds `delta` at one level (default: the item's default location), with the item's quantity, the adjustment and its events. */
    adjustStock(workspaceId: WorkspaceId, itemId: string, input: AdjustmentInput): Promise<{ adjustment: StockAdjustment; item: Item } | StockRefusal> {
      return db.$transaction(async (tx) => {
        const locked = await lockForStockWrite(tx, workspaceId, itemId);
        if (!locked) return { refused: 'item_not_found' } as const;
        const { item: current, now } = locked;
        if (input.delta > 0 && current.quantity > INT4_MAX - input.delta) return { refused: 'too_large' } as const;
        const change = { ...input, locationId: input.locationId === undefined ? current.locationId : input.locationId };
        const done = await adjustLevel(tx, workspaceId, itemId, change, { onHand: input.delta, reserved: 0 }, now);
        if (!done) return { refused: 'insufficient_stock', available: await availableAt(tx, itemId, change.locationId) } as const;
        await recordOutboxEvents(tx, done.events, now);
        return { adjustment: done.adjustment, item: done.item };
      });
    },

    /** Moves available stock between two levels of an item: one movement, `item.stock_transferred`; the item is unchanged. */
    transfer(workspaceId: WorkspaceId, itemId: string, input: TransferInput): Promise<{ transfer: Movement; item: Item } | StockRefusal> {
      return db.$transaction(async (tx) => {
        const locked = await lockForStockWrite(tx, workspaceId, itemId);
        if (!locked) return { refused: 'item_not_found' } as const;
        const { item, now } = locked;
        const { fromLocationId, toLocationId, quantity, note } = input;
        const [transfer] = await tx.$queryRaw<Movement[]>`
          WITH "source" AS (${levelChange(workspaceId, itemId, fromLocationId, { onHand: -quantity, reserved: 0 }, now)}),
          "target" AS (${levelChange(workspaceId, itemId, toLocationId, { onHand: quantity, reserved: 0 }, now, Prisma.sql`EXISTS (SELECT 1 FROM "source")`)})
          INSERT INTO "movements" ("id", "workspace_id", "item_id", "from_location_id", "to_location_id", "quantity", "reason", "note", "created_at")
          SELECT gen_random_uuid(), ${workspaceId}::uuid, ${itemId}::uuid, ${fromLocationId}::uuid, ${toLocationId}::uuid, ${quantity}::int, ${TRANSFER}, ${note}, ${now}::timestamptz
           WHERE EXISTS (SELECT 1 FROM "source")
          RETURNING ${MOVEMENT}`;
        if (!transfer) return { refused: 'insufficient_stock', available: await availableAt(tx, itemId, fromLocationId) } as const;
        await recordOutboxEvents(tx, [{ type: 'item.stock_transferred', workspaceId, data: renderTransfer(transfer) }], now);
        return { transfer, item };
      });
    },

    /**
     * Holds available stock at one level (default: the item's default location) for `expiresInSeconds`,
     * with `reservation.created`, unless the workspace already has `limit` active reservations.
     *
     * The workspace's reservations lock comes first, in a statement of its own, so that the count
     * (in the item's lock statement) is taken while it is held; then the item's lock: one order for
     * every reservation, and no other write takes this lock, so none waits in a circle. Far from the
     * limit the lock is shared: reservations of different items never wait on each other, and the
     * hot item's lock is held no longer than before. Near it the transaction starts again with the
     * lock exclusive (reservationAdmission says why that is exact).
     */
    async reserve(workspaceId: WorkspaceId, itemId: string, input: ReservationInput, limit: number): Promise<Reservation | StockRefusal> {
      const attempt = (exclusive: boolean) =>
        db.$transaction(async (tx): Promise<Reservation | StockRefusal | 'lock'> => {
          if (exclusive) await lockWorkspaceQuota(tx, 'active_reservations', workspaceId);
          else await lockWorkspaceQuotaShared(tx, 'active_reservations', workspaceId);
          const locked = await lockForStockWrite(tx, workspaceId, itemId, { countActive: { limit } });
          if (!locked) return { refused: 'item_not_found' } as const;
          const { item, now, active } = locked;
          const admission = reservationAdmission(active!.reservations, limit, active!.connections, exclusive);
          if (admission === 'lock') return 'lock';
          if (admission === 'refuse') return { refused: 'limit_reached', quota: 'active_reservations', limit } as const;
          const locationId = input.locationId === undefined ? item.locationId : input.locationId;
          const [reservation] = await tx.$queryRaw<Reservation[]>`
            WITH "level" AS (${levelChange(workspaceId, itemId, locationId, { onHand: 0, reserved: input.quantity }, now)})
            INSERT INTO "reservations" ("id", "workspace_id", "item_id", "location_id", "quantity", "status", "reference", "expires_at", "created_at", "updated_at")
            SELECT gen_random_uuid(), ${workspaceId}::uuid, ${itemId}::uuid, ${locationId}::uuid, ${input.quantity}::int, 'active', ${input.reference},
                   ${expiresAt(now, input.expiresInSeconds)}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
             WHERE EXISTS (SELECT 1 FROM "level")
            RETURNING ${RESERVATION}`;
          if (!reservation) return { refused: 'insufficient_stock', available: await availableAt(tx, itemId, locationId) } as const;
          await recordOutboxEvents(tx, [{ type: 'reservation.created', workspaceId, data: renderReservation(reservation) }], now);
          return reservation;
        });
      const shared = await attempt(false);
      if (shared !== 'lock') return shared;
      // Under the exclusive lock admission is 'admit' or 'refuse', never 'lock'.
      return (await attempt(true)) as Reservation | StockRefusal;
    },

    /**
     * The reserved stock leaves its level as one `sale` adjustment; `reservation.committed` beside
     * the adjustment's events. Only an active reservation before its `expires_at` commits: one that
     * is due is expired first, in this same transaction, so a commit racing its expiry has one outcome.
     */
    commitReservation(workspaceId: WorkspaceId, id: string): Promise<{ reservation: Reservation; adjustment: StockAdjustment; item: Item } | StockRefusal> {
      return db.$transaction(async (tx) => {
        const ended = await endReservation(tx, workspaceId, id, 'committed');
        if ('refused' in ended) return ended;
        const { reservation, now } = ended;
        const { quantity, itemId, locationId } = reservation;
        const change = { locationId, delta: -quantity, reason: AdjustmentReason.sale, note: null };
        const done = await adjustLevel(tx, workspaceId, itemId, change, { onHand: -quantity, reserved: -quantity }, now);
        if (!done) throw new Error(`reservation ${reservation.id} was active but its level does not hold its quantity`);
        await recordOutboxEvents(tx, [...done.events, { type: 'reservation.committed', workspaceId, data: renderReservation(reservation) }], now);
        return { reservation, adjustment: done.adjustment, item: done.item };
      });
    },

    /** The reserved stock is available again; `reservation.released`. Only an active reservation before its `expires_at`. */
    releaseReservation(workspaceId: WorkspaceId, id: string): Promise<Reservation | StockRefusal> {
      return db.$transaction(async (tx) => {
        const ended = await endReservation(tx, workspaceId, id, 'released');
        if ('refused' in ended) return ended;
        const { reservation, now } = ended;
        const freed = await tx.$queryRaw<unknown[]>(
          levelChange(workspaceId, reservation.itemId, reservation.locationId, { onHand: 0, reserved: -reservation.quantity }, now),
        );
        if (freed.length === 0) throw new Error(`reservation ${reservation.id} was active but its level does not hold its quantity`);
        await recordOutboxEvents(tx, [{ type: 'reservation.released', workspaceId, data: renderReservation(reservation) }], now);
        return reservation;
      });
    },
  });
}
export type StockStore = ReturnType<typeof stockStore>;

/**
 * Ends an active reservation (`committed` or `released`) in one conditional UPDATE, after its
 * item's lock is taken and its due reservations expired, so a reservation past its `expires_at`
 * is refused as expired, whatever the sweeper has done yet.
 */
async function endReservation(
  tx: Tx,
  workspaceId: WorkspaceId,
  id: string,
  status: 'committed' | 'released',
): Promise<{ reservation: Reservation; now: Date } | StockRefusal> {
  const found = await tx.reservation.findFirst({ where: { id, workspaceId }, select: { itemId: true } });
  if (!found) return { refused: 'reservation_not_found' };
  const locked = await lockForStockWrite(tx, workspaceId, found.itemId);
  if (!locked) throw new Error(`reservation ${id} names no item of its workspace`);
  const { now } = locked;
  const [reservation] = await tx.$queryRaw<Reservation[]>`
    UPDATE "reservations" SET "status" = ${status}::"reservation_status", "updated_at" = ${now}::timestamptz
     WHERE "id" = ${id}::uuid AND "workspace_id" = ${workspaceId}::uuid AND "status" = 'active' AND "expires_at" > ${now}::timestamptz
    RETURNING ${RESERVATION}`;
  if (reservation) return { reservation, now };
  const current = await tx.reservation.findFirst({ where: { id, workspaceId }, select: { status: true } });
  return current ? { refused: 'reservation_not_active', status: current.status } : { refused: 'reservation_not_found' };
}
