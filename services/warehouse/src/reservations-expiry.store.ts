import type { WorkspaceId } from '@platform/core';
import type { Database } from './database';
import { lockForStockWrite } from './stock.store';

/** The reservations sweeper's queries, over every workspace. */
export function reservationsExpiryStore(db: Database) {
  return {
    /**
     * The items of the `limit` longest overdue active reservations at `now` (fewer items when one has
     * several): read from the head of the partial index reservations_active_expires_at_idx, so a
     * backlog costs each pass `limit` rows, not all of them.
     */
    itemsWithDueReservations(now: Date, limit: number): Promise<{ workspaceId: WorkspaceId; itemId: string }[]> {
      return db.$queryRaw`
        SELECT DISTINCT due."workspace_id" AS "workspaceId", due."item_id" AS "itemId" FROM (
          SELECT "workspace_id", "item_id" FROM "reservations"
           WHERE "status" = 'active' AND "expires_at" <= ${now}::timestamptz
           ORDER BY "expires_at" LIMIT ${limit}::int
        ) due`;
    },

    /**
     * Expires the item's due reservations (their stock released, `reservation.expired` each) in one
     * transaction under the item's lock, as every write on the item does first. SKIP LOCKED: an item
     * another sweeper or a request holds is left to it (a request releases them itself) or to the
     * next sweep. Returns how many expired here.
     */
    async expireItem(workspaceId: WorkspaceId, itemId: string): Promise<number> {
      return db.$transaction(async (tx) => (await lockForStockWrite(tx, workspaceId, itemId, { skipLocked: true }))?.expired.length ?? 0);
    },

    /**
     * Deletes up to `limit` reservations that ended (committed, released, expired) before `endedBefore`,
     * oldest first; SKIP LOCKED, so sweepers of several instances take disjoint rows.
     */
    deleteEnded(endedBefore: Date, limit: number): Promise<number> {
      // The inner query is served by the partial index reservations_ended_updated_at_idx (same WHERE).
      return db.$executeRaw`
        DELETE FROM "reservations" WHERE "ctid" = ANY(ARRAY(
          SELECT "ctid" FROM "reservations"
           WHERE "status" <> 'active' AND "updated_at" < ${endedBefore}::timestamptz
           ORDER BY "updated_at" LIMIT ${limit}::int
           FOR UPDATE SKIP LOCKED))`;
    },
  };
}
export type ReservationsExpiryStore = ReturnType<typeof reservationsExpiryStore>;
