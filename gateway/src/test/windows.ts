/** Largest number of accepted requests in any rolling window [t, t + windowMs). */
export function maxInAnyWindow(accepted: number[], windowMs: number): number {
  const sorted = [...accepted].sort((a, b) => a - b);
  let max = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    max = Math.max(max, end - start + 1);
  }
  return max;
}
