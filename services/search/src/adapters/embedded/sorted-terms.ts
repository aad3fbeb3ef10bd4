/**
 * The term dictionary is one sorted array of strings: a prefix is a binary-searched range
 * and an exact term a binary search; typo matching lives in term-trie.ts.
 */
import { partitionPoint } from "./binary-search.ts";

export function lowerBound(terms: readonly string[], key: string, from = 0): number {
  return partitionPoint(from, terms.length, (i) => terms[i]! < key);
}

/**
 * [start, end) of the terms that start with `prefix`. The end is searched with `startsWith`, not
 * against `prefix + "\uffff"`: that key is a two-byte string, and V8 compares it with the
 * dictionary's one-byte strings outside its fast path (5% of a word pair's search).
 */
export function prefixRange(terms: readonly string[], prefix: string): [number, number] {
  const start = lowerBound(terms, prefix);
  const end = partitionPoint(start, terms.length, (i) => terms[i]!.startsWith(prefix));
  return [start, end];
}

export function exactIndex(terms: readonly string[], term: string): number {
  const i = lowerBound(terms, term);
  return i < terms.length && terms[i] === term ? i : -1;
}

/** How many edits a query token of this length may carry: 1 from 5 characters, 2 from 9. */
export function allowedTypos(length: number): number {
  return length >= 9 ? 2 : length >= 5 ? 1 : 0;
}
