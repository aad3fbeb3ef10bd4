/**
 * A per-index memo of query-token work (typo expansions, app node name scans). Real traffic
 * repeats its words; the index behind it is immutable, so entries never go stale, and a
 * reindex brings a new index with an empty cache. Bounded by entries and by the numbers held
 * (so hostile traffic cannot grow it past a few tens of MiB); when full it is dropped whole.
 */
export class QueryCache {
  private readonly entries = new Map<string, number[]>();
  private held = 0;

  constructor(
    private readonly maxEntries = 16_384,
    private readonly maxNumbers = 4_000_000,
  ) {}

  getOrCompute(key: string, compute: () => number[]): number[] {
    const hit = this.entries.get(key);
    if (hit) return hit;
    const value = compute();
    if (this.entries.size >= this.maxEntries || this.held + value.length > this.maxNumbers) {
      this.entries.clear();
      this.held = 0;
    }
    if (value.length <= this.maxNumbers) {
      this.entries.set(key, value);
      this.held += value.length;
    }
    return value;
  }
}
