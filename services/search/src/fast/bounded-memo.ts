import { SeenBefore } from "./seen-before.ts";

/** Lookups of every memo of one name in this process (all indexes' result memos count as "result"). */
export interface MemoLookups {
  hits: number;
  misses: number;
}

const lookupsByName = new Map<string, MemoLookups>();

/** The lookup counts so far, by memo name (plain integers on the hot path; /metrics reads them). */
export function memoLookups(): ReadonlyMap<string, Readonly<MemoLookups>> {
  return lookupsByName;
}

function lookupsOf(name: string): MemoLookups {
  let counts = lookupsByName.get(name);
  if (!counts) lookupsByName.set(name, (counts = { hits: 0, misses: 0 }));
  return counts;
}

/**
 * A memo for pure functions of a query: real traffic repeats itself, and what is remembered
 * is derived from something immutable (an index, or nothing at all), so entries never go
 * stale; a reindex brings a new index with empty memos. Bounded by entries and by a weight
 * (so hostile traffic cannot grow it past a few tens of MiB); when full it is dropped whole,
 * which costs one recomputation per key and no bookkeeping on the hot path.
 *
 * A key is remembered from its second request on (`SeenBefore`): most query strings are asked
 * once, and remembering those filled the memos with entries that outlived the young
 * generation, were dropped whole a few seconds later and left the collector a heap of
 * old-generation garbage (first-sight traffic through the gateway: scavenges of 15-130 ms,
 * +120 MiB RSS in 10 s).
 *
 * Kept rather than lru-cache because it is faster per lookup and holds nothing of first-sight
 * keys: `bench/memo-lru-ab.ts` measures both in one run (bench/results/memo-lru-ab.json).
 */
export class BoundedMemo<V> {
  private readonly entries = new Map<string, V>();
  private held = 0;
  private readonly lookups: MemoLookups;
  private readonly seen = new SeenBefore();

  constructor(
    name: string,
    private readonly weigh: (value: V, key: string) => number,
    private readonly maxEntries = 16_384,
    private readonly maxWeight = 4_000_000,
  ) {
    this.lookups = lookupsOf(name);
  }

  /**
   * `keep` makes the copy that is remembered, when it is: a value computed into scratch space
   * is returned as it is, and copied only for the keys asked before.
   */
  getOrCompute(key: string, compute: () => V, keep?: (value: V) => V): V {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.lookups.hits++;
      return hit;
    }
    this.lookups.misses++;
    let value = compute();
    if (!this.seen.offer(key)) return value;
    if (keep) value = keep(value);
    const weight = this.weigh(value, key);
    if (this.entries.size >= this.maxEntries || this.held + weight > this.maxWeight) {
      this.entries.clear();
      this.held = 0;
    }
    if (weight <= this.maxWeight) {
      this.entries.set(key, value);
      this.held += weight;
    }
    return value;
  }
}
