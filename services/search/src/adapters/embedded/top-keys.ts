/**
 * The k smallest of a stream of keys, kept in a bounded max-heap: a key no smaller than the
 * heap's largest is turned away by one comparison, so a search offers each candidate's key as it
 * computes it and never stores or reads back the thousands that lose (a word pair has ~2,300
 * candidates for a page of 10). Reused between searches, which run one at a time.
 */
export class TopKeys {
  private heap = new Float64Array(64);
  private k = 0;
  private size = 0;

  /** Returns the bar: a key must be below it to be kept. */
  reset(k: number): number {
    if (k > this.heap.length) this.heap = new Float64Array(k);
    this.k = k;
    this.size = 0;
    return Infinity;
  }

  /**
   * Keep `v` if it is among the k smallest so far; returns the new bar. Callers test `v < bar`
   * themselves, so the thousands of keys that lose cost one comparison and no call.
   */
  offer(v: number): number {
    const heap = this.heap;
    if (this.size < this.k) {
      let j = this.size++;
      heap[j] = v;
      while (j > 0) {
        const parent = (j - 1) >> 1;
        if (heap[parent]! >= v) break;
        heap[j] = heap[parent]!;
        j = parent;
      }
      heap[j] = v;
    } else if (v < heap[0]!) {
      const k = this.k;
      let j = 0;
      for (;;) {
        const l = 2 * j + 1;
        if (l >= k) break;
        const r = l + 1;
        const c = r < k && heap[r]! > heap[l]! ? r : l;
        if (heap[c]! <= v) break;
        heap[j] = heap[c]!;
        j = c;
      }
      heap[j] = v;
    }
    return this.size < this.k ? Infinity : heap[0]!;
  }

  /** The keys kept, ascending. */
  sorted(): Float64Array {
    return this.heap.slice(0, this.size).sort();
  }
}

/** The k smallest keys in ascending order: a bounded max-heap when k is small against n, else a full sort. */
export function selectTop(keys: Float64Array, n: number, k: number, top = new TopKeys()): Float64Array {
  if (k <= 0 || n === 0) return new Float64Array(0);
  if (k * 4 >= n) return keys.slice(0, n).sort().subarray(0, Math.min(k, n));
  let bar = top.reset(k);
  for (let i = 0; i < n; i++) if (keys[i]! < bar) bar = top.offer(keys[i]!);
  return top.sorted();
}
