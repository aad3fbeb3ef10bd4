/**
 * A trie over the sorted term dictionary, stored in flat arrays, for typo matching: a
 * depth-first walk carries one row of the edit-distance table per depth and abandons a subtree
 * as soon as no cell of its row is within the allowed distance.
 */
export class TermTrie {
  private readonly char: Uint16Array;
  private readonly firstChild: Int32Array;
  private readonly nextSibling: Int32Array;
  /** Index of the term ending at this node in the sorted dictionary, or -1. */
  private readonly termAt: Int32Array;
  readonly size: number;

  constructor(sortedTerms: readonly string[]) {
    let cap = 1024;
    let char = new Uint16Array(cap);
    let first = new Int32Array(cap).fill(-1);
    let next = new Int32Array(cap).fill(-1);
    let termAt = new Int32Array(cap).fill(-1);
    let lastChild = new Int32Array(cap).fill(-1);
    let size = 1;
    const path: number[] = [0];
    let prev = "";
    const grow = () => {
      cap *= 2;
      const g16 = (a: Uint16Array) => { const b = new Uint16Array(cap); b.set(a); return b; };
      const g32 = (a: Int32Array) => { const b = new Int32Array(cap).fill(-1); b.set(a); return b; };
      char = g16(char);
      first = g32(first);
      next = g32(next);
      termAt = g32(termAt);
      lastChild = g32(lastChild);
    };
    for (let s = 0; s < sortedTerms.length; s++) {
      const t = sortedTerms[s]!;
      let l = 0;
      const lim = Math.min(prev.length, t.length);
      while (l < lim && prev.charCodeAt(l) === t.charCodeAt(l)) l++;
      for (let depth = l + 1; depth <= t.length; depth++) {
        if (size === cap) grow();
        const node = size++;
        const parent = path[depth - 1]!;
        char[node] = t.charCodeAt(depth - 1);
        if (lastChild[parent] === -1) first[parent] = node;
        else next[lastChild[parent]!] = node;
        lastChild[parent] = node;
        path[depth] = node;
      }
      termAt[path[t.length]!] = s;
      prev = t;
    }
    this.char = char.slice(0, size);
    this.firstChild = first.slice(0, size);
    this.nextSibling = next.slice(0, size);
    this.termAt = termAt.slice(0, size);
    this.size = size;
  }

  /**
   * Every term within `maxD` edits of `q` (Damerau's optimal string alignment: insert, delete,
   * substitute, swap two neighbours), reported as (sorted term index, distance).
   */
  fuzzy(q: string, maxD: number, onMatch: (termIndex: number, distance: number) => void): void {
    const m = q.length;
    const maxDepth = m + maxD;
    const qc = new Int32Array(m);
    for (let j = 0; j < m; j++) qc[j] = q.charCodeAt(j);
    const rows: Int32Array[] = [];
    for (let d = 0; d <= maxDepth; d++) rows.push(new Int32Array(m + 1));
    for (let j = 0; j <= m; j++) rows[0]![j] = j;
    const chars = new Int32Array(maxDepth + 1);
    const { char, firstChild, nextSibling, termAt } = this;

    const visit = (node: number, depth: number): void => {
      const row = rows[depth]!;
      const up = rows[depth - 1]!;
      const up2 = depth > 1 ? rows[depth - 2]! : up;
      const c = char[node]!;
      chars[depth] = c;
      const cPrev = depth > 1 ? chars[depth - 1]! : -1;
      row[0] = depth;
      let min = depth;
      for (let j = 1; j <= m; j++) {
        const qj = qc[j - 1]!;
        let v = up[j - 1]! + (qj === c ? 0 : 1);
        const del = up[j]! + 1;
        if (del < v) v = del;
        const ins = row[j - 1]! + 1;
        if (ins < v) v = ins;
        if (j > 1 && depth > 1 && c === qc[j - 2] && cPrev === qj) {
          const tr = up2[j - 2]! + 1;
          if (tr < v) v = tr;
        }
        row[j] = v;
        if (v < min) min = v;
      }
      if (min > maxD) return;
      const t = termAt[node]!;
      if (t >= 0 && row[m]! <= maxD) onMatch(t, row[m]!);
      if (depth === maxDepth) return;
      for (let ch = firstChild[node]!; ch !== -1; ch = nextSibling[ch]!) visit(ch, depth + 1);
    };
    for (let ch = firstChild[0]!; ch !== -1; ch = nextSibling[ch]!) visit(ch, 1);
  }
}
