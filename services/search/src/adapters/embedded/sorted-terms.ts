/**
 * The term dictionary is one sorted array of strings: a prefix is a binary-searched range
 * and an exact term a binary search; typo matching lives in term-trie.ts.
 */

/** Two ASCII characters make 128 × 128 buckets; the one past the last bounds them. */
const BUCKETS = 128 * 128;

/**
 * The sorted dictionary with where each prefix of two ASCII characters starts, so that a lookup
 * binary-searches one bucket (a few hundred terms) rather than the whole dictionary (77k on the
 * real catalog): a string comparison is the costly step, and a search makes a few lookups per
 * word. A prefix of one ASCII character is a range at once. Other keys search everything.
 */
export class SortedTerms {
  private readonly starts = new Int32Array(BUCKETS + 1);

  constructor(readonly terms: readonly string[]) {
    // Bucket (a, 0) starts at `a` itself, which sorts before `a` + any character.
    for (let k = 0; k <= BUCKETS; k++) {
      const a = k >> 7;
      const b = k & 127;
      this.starts[k] = lowerBound(terms, b === 0 ? String.fromCharCode(a) : String.fromCharCode(a, b), k > 0 ? this.starts[k - 1]! : 0);
    }
  }

  /** [start, end) of the terms that start with `prefix`. */
  prefixRange(prefix: string): [number, number] {
    const terms = this.terms;
    const a = prefix.charCodeAt(0);
    if (prefix.length === 1 && a < 128) return [this.starts[a << 7]!, this.starts[(a + 1) << 7]!];
    const [lo, hi] = this.bucket(prefix);
    const start = lowerBound(terms, prefix, lo, hi);
    // The end by `startsWith`, not against `prefix + "\uffff"`: that key is a two-byte string,
    // which V8 compares with the dictionary's one-byte strings outside its fast path.
    let l = start;
    let h = hi;
    while (l < h) {
      const mid = (l + h) >>> 1;
      if (terms[mid]!.startsWith(prefix)) l = mid + 1;
      else h = mid;
    }
    return [start, l];
  }

  /** The term's index, or -1. */
  exactIndex(term: string): number {
    const [lo, hi] = this.bucket(term);
    const i = lowerBound(this.terms, term, lo, hi);
    return i < this.terms.length && this.terms[i] === term ? i : -1;
  }

  /** Bounds that hold every term sharing the key's first two characters, and the key's own place. */
  private bucket(key: string): [number, number] {
    const a = key.charCodeAt(0);
    const b = key.length > 1 ? key.charCodeAt(1) : 0;
    if (a >= 128 || b >= 128 || key.length < 2) return [0, this.terms.length];
    const k = (a << 7) | b;
    return [this.starts[k]!, this.starts[k + 1]!];
  }
}

/**
 * The first index in [from, to) whose term is not below `key`. A loop, as is `prefixRange`'s
 * end, rather than `partitionPoint` with a predicate closure: with the buckets a lookup is a few
 * comparisons, and a closure per lookup costs more than they do.
 */
export function lowerBound(terms: readonly string[], key: string, from = 0, to = terms.length): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (terms[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How many edits a query token of this length may carry: 1 from 5 characters, 2 from 9. */
export function allowedTypos(length: number): number {
  return length >= 9 ? 2 : length >= 5 ? 1 : 0;
}
