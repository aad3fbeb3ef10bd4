import { partitionPoint } from "./binary-search.ts";

const key = (s: string, i: number): number => s.charCodeAt(i) * 2 ** 32 + s.charCodeAt(i + 1) * 2 ** 16 + s.charCodeAt(i + 2);

/**
 * Which strings may contain a needle of three characters or more: for every three consecutive
 * UTF-16 code units of every string, the ids of the strings holding them (CSR lists, ascending).
 * A substring search then verifies only the strings of the needle's rarest trigram, instead of
 * scanning every string (app node names at 5.9k nodes: 39k names, 808k characters, 0.7 ms a scan).
 */
export class TrigramIndex {
  private readonly keys: Float64Array;
  private readonly start: Int32Array;
  private readonly ids: Int32Array;

  constructor(strings: readonly string[]) {
    const lists = new Map<number, number[]>();
    for (let id = 0; id < strings.length; id++) {
      const s = strings[id]!;
      for (let i = 0; i + 3 <= s.length; i++) {
        const k = key(s, i);
        let list = lists.get(k);
        if (list === undefined) lists.set(k, (list = []));
        if (list[list.length - 1] !== id) list.push(id); // ids come in order: a repeat within one string is the last one
      }
    }
    this.keys = Float64Array.from(lists.keys()).sort();
    this.start = new Int32Array(this.keys.length + 1);
    for (let t = 0; t < this.keys.length; t++) this.start[t + 1] = this.start[t]! + lists.get(this.keys[t]!)!.length;
    this.ids = new Int32Array(this.start[this.keys.length]!);
    for (let t = 0; t < this.keys.length; t++) this.ids.set(lists.get(this.keys[t]!)!, this.start[t]);
  }

  /**
   * Ids of the strings holding the needle's rarest trigram, ascending: a superset of those that
   * contain the needle. Undefined for a needle shorter than three (the caller scans).
   */
  candidates(needle: string): Int32Array | undefined {
    if (needle.length < 3) return undefined;
    let best: Int32Array | undefined;
    for (let i = 0; i + 3 <= needle.length; i++) {
      const k = key(needle, i);
      const t = partitionPoint(0, this.keys.length, (j) => this.keys[j]! < k);
      if (t === this.keys.length || this.keys[t] !== k) return new Int32Array(0);
      const list = this.ids.subarray(this.start[t], this.start[t + 1]);
      if (best === undefined || list.length < best.length) best = list;
    }
    return best;
  }
}
