/**
 * The first index in [from, to) at which `before(i)` turns false, for a predicate that is true
 * on a prefix of the range (a sorted array's lower or upper bound, with `<` or `<=`).
 */
export function partitionPoint(from: number, to: number, before: (i: number) => boolean): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
