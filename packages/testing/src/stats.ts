/** The value below which `q` (0..1) of the sorted samples fall (nearest rank; under 100 samples p99 is the largest). */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/**
 * The most a workspace's p99 may be while a neighbour floods the platform (contract section 20),
 * from its p99 without a flood in the same run: five times as long, and at least two seconds more.
 * Two shared cores carry the flood too, so a neighbour may slow down by a multiple (a 20 ms
 * request at 300 ms is a machine under load, not a starved tenant; on two cores shared with other
 * builds single requests took 1.8 s under a fair flood); what the hostile battery first found was
 * seconds (a run queued behind every tick of another workspace, 4-6 s and more), past this bound
 * from any quiet p99 under 800 ms. `allowanceMs` is what the contract lets it wait on top: for a
 * run, the end of one run of the other workspace already running. The hostile battery's neighbours
 * category and the fair-runs bench both judge by it.
 */
export function neighbourP99Bound(quietP99: number, allowanceMs = 0): number {
  return Math.max(5 * quietP99, quietP99 + 2_000) + allowanceMs;
}
