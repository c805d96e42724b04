import { DEFAULT_WORKSPACE_LIMITS, type WorkspaceLimitName } from '@platform/core';

/**
 * What one workspace may keep in the warehouse beyond the contract's quotas, the same for every
 * workspace (WAREHOUSE_WORKSPACE_MAX_*): items and locations (never deleted, counted in
 * `workspace_usage`) and reservations active at once (counted as reads see them). One more is 409
 * `conflict`, `errors[0].code = "quota_exceeded"`, `error.quota` the name, `error.limit` the value.
 */
export type WarehouseLimits = Record<Extract<WorkspaceLimitName, 'items' | 'locations' | 'active_reservations'>, number>;
export type WarehouseLimitName = keyof WarehouseLimits;

export const DEFAULT_WAREHOUSE_LIMITS: Readonly<WarehouseLimits> = Object.freeze({
  items: DEFAULT_WORKSPACE_LIMITS.items,
  locations: DEFAULT_WORKSPACE_LIMITS.locations,
  active_reservations: DEFAULT_WORKSPACE_LIMITS.active_reservations,
});

/** What a store answers instead of writing when a create would pass a limit: nothing was written. */
export interface LimitReached {
  refused: 'limit_reached';
  quota: WarehouseLimitName;
  limit: number;
}

/**
 * What a new reservation does after counting the workspace's reservations active and not yet due
 * (`active`, up to the limit) in a snapshot taken once it held the workspace's reservations lock
 * (core's lockWorkspaceQuota key), shared (`locked: false`) or exclusive (`locked: true`). It holds
 * that lock to its commit.
 *
 * Shared is the common case: reservations of different items then never wait on each other. It is
 * exact while `active + connections < limit`. The reservations this count misses are those that had
 * counted before it but not committed: each such transaction was open, on a server connection of
 * its own, when this snapshot was taken, so there are fewer than `connections` (the server's
 * max_connections, which bounds every pool of every process and pooler together, whatever the number
 * of replicas). Nearer the limit the reservation starts again under the exclusive lock, which is
 * granted only once every shared holder has committed (its count sees them all) and keeps any other
 * reservation of the workspace from counting until it commits. At or past the limit it is refused
 * under either lock: at the count's instant the workspace held that many.
 */
export function reservationAdmission(active: number, limit: number, connections: number, locked: boolean): 'admit' | 'lock' | 'refuse' {
  if (active >= limit) return 'refuse';
  if (locked || active + connections < limit) return 'admit';
  return 'lock';
}
