import type { Database } from './database';

/** The scans retention deletes; a scan of the event's own ticket lives as long as its event. */
const UNMATCHED_STATUSES = `('not_found', 'wrong_event')`;

/** The retention sweeper's deletes. */
export function scansRetentionStore(db: Database) {
  return {
    /**
     * Deletes up to `limit` scans of unknown or other events' tickets recorded before `recordedBefore`,
     * oldest first. SKIP LOCKED: sweepers of several service instances take disjoint rows and never
     * wait on each other (nor on an upload that is replaying a scan).
     */
    deleteUnmatchedScans(recordedBefore: Date, limit: number): Promise<number> {
      // The inner query is served by the partial index scans_unmatched_recorded_at_idx (same WHERE);
      // the rows are then deleted by ctid (a TID scan), which their lock keeps in place until commit:
      // a composite key compared with "= ANY" would not use the primary key.
      return db.$executeRawUnsafe(
        `DELETE FROM "scans" WHERE "ctid" = ANY(ARRAY(
           SELECT "ctid" FROM "scans"
            WHERE "status" IN ${UNMATCHED_STATUSES} AND "recorded_at" < $1::timestamptz
            ORDER BY "recorded_at" LIMIT $2::int
            FOR UPDATE SKIP LOCKED))`,
        recordedBefore,
        limit,
      );
    },
  };
}
export type ScansRetentionStore = ReturnType<typeof scansRetentionStore>;
