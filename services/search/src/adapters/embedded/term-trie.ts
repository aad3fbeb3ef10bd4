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
  /** Length of the longest term in each node's subtree: subtrees of too-short terms are skipped. */
  private readonly maxLen: Uint16Array;
  /** The walk's stack, kept between calls (searches run one at a time). */
  private stackNode = new Int32Array(4096);
  private stackDepth = new Int32Array(4096);

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
    // Longest term under each node: children are numbered after their parents, so one
    // backwards pass sees every child before its parent.
    const maxLen = new Uint16Array(size);
    const depthOf = new Uint16Array(size);
    for (let node = 0; node < size; node++) {
      for (let ch = this.firstChild[node]!; ch !== -1; ch = this.nextSibling[ch]!) depthOf[ch] = depthOf[node]! + 1;
    }
    for (let node = size - 1; node >= 0; node--) {
      let best = this.termAt[node]! >= 0 ? depthOf[node]! : 0;
      for (let ch = this.firstChild[node]!; ch !== -1; ch = this.nextSibling[ch]!) if (maxLen[ch]! > best) best = maxLen[ch]!;
      maxLen[node] = best;
    }
    this.maxLen = maxLen;
  }

  /**
   * Every term within `maxD` edits of `q` (Damerau's optimal string alignment: insert, delete,
   * substitute, swap two neighbours), reported as (sorted term index, distance). As in
   * Meilisearch, a typo on the first character counts as two: with one typo allowed the first
   * character must match; with two, either it matches and the rest has up to two, or the whole
   * word is within one edit (reported as distance 2).
   */
  fuzzy(q: string, maxD: number, onMatch: (termIndex: number, distance: number) => void): void {
    if (q.length === 0) return;
    const first = q.charCodeAt(0);
    for (let ch = this.firstChild[0]!; ch !== -1; ch = this.nextSibling[ch]!) {
      if (this.char[ch] === first) {
        this.walk(ch, 1, q.slice(1), maxD, onMatch);
        break;
      }
    }
    if (maxD >= 2) this.frontEdits(q, (t) => onMatch(t, 2));
  }

  /**
   * The terms one edit from `q` where the edit touches the first character: the only way a
   * term starting with another character can be one edit away. Each is an exact lookup, not
   * a walk (a walk from the root with one typo cost 70 µs a token at 63k terms; this, a few).
   * Terms starting with q's own first character are the first walk's, at no more than 2.
   */
  private frontEdits(q: string, onMatch: (termIndex: number) => void): void {
    const report = (t: number) => {
      if (t >= 0) onMatch(t);
    };
    const rest = q.slice(1);
    report(this.lookup(0, rest)); // the first character deleted
    if (q.length >= 2 && q[0] !== q[1]) report(this.lookup(0, q[1]! + q[0]! + q.slice(2))); // the first two swapped
    const first = q.charCodeAt(0);
    for (let ch = this.firstChild[0]!; ch !== -1; ch = this.nextSibling[ch]!) {
      if (this.char[ch] === first) continue;
      report(this.lookup(ch, rest)); // the first character replaced
      report(this.lookup(ch, q)); // a character inserted before it
    }
  }

  /** The term spelled by the path to `node` followed by `s`, or -1. */
  private lookup(node: number, s: string): number {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      // Siblings are in ascending order (the trie is built from sorted terms): stop at the first past `c`.
      let ch = this.firstChild[node]!;
      while (ch !== -1 && this.char[ch]! < c) ch = this.nextSibling[ch]!;
      if (ch === -1 || this.char[ch] !== c) return -1;
      node = ch;
    }
    return node === 0 ? -1 : this.termAt[node]!;
  }

  /** Edit distance of `q` against the terms below `root` (which sits at depth `base`), suffixes only. */
  private walk(root: number, base: number, q: string, maxD: number, onMatch: (termIndex: number, distance: number) => void): void {
    const m = q.length;
    const maxDepth = m + maxD;
    const BIG = maxD + 1;
    const W = m + 2;
    const qc = new Int32Array(m + 1);
    for (let j = 0; j < m; j++) qc[j + 1] = q.charCodeAt(j);
    // One flat table, a row per depth; only the band of cells within maxD of the diagonal is
    // computed (the others can never come back under maxD), with a guard cell on each side.
    const rows = new Int32Array((maxDepth + 1) * W).fill(BIG);
    for (let j = 0; j <= Math.min(m, maxD); j++) rows[j] = j;
    const chars = new Int32Array(maxDepth + 2);
    const char = this.char;
    const firstChild = this.firstChild;
    const nextSibling = this.nextSibling;
    const termAt = this.termAt;
    const maxLen = this.maxLen;
    const minLen = base + m - maxD;
    // The walk starts below `root`; a term ending at `root` itself is the empty suffix.
    if (root !== 0 && this.termAt[root]! >= 0 && m <= maxD) onMatch(this.termAt[root]!, m);
    let stackNode = this.stackNode;
    let stackDepth = this.stackDepth;
    let sp = 0;
    for (let ch = firstChild[root]!; ch !== -1; ch = nextSibling[ch]!) {
      if (maxLen[ch]! < minLen) continue;
      stackNode[sp] = ch;
      stackDepth[sp++] = 1;
    }
    while (sp > 0) {
      const node = stackNode[--sp]!;
      const depth = stackDepth[sp]!;
      const r = depth * W;
      const u = r - W;
      const u2 = u - W;
      const c = char[node]!;
      chars[depth] = c;
      const cPrev = depth > 1 ? chars[depth - 1]! : -1;
      const lo = depth - maxD > 1 ? depth - maxD : 1;
      const hi = depth + maxD < m ? depth + maxD : m;
      rows[r] = depth <= maxD ? depth : BIG;
      if (lo > 1) rows[r + lo - 1] = BIG;
      let min = rows[r]!;
      for (let j = lo; j <= hi; j++) {
        const qj = qc[j]!;
        let v = rows[u + j - 1]! + (qj === c ? 0 : 1);
        const del = rows[u + j]! + 1;
        if (del < v) v = del;
        const ins = rows[r + j - 1]! + 1;
        if (ins < v) v = ins;
        if (j > 1 && depth > 1 && c === qc[j - 1] && cPrev === qj) {
          const tr = rows[u2 + j - 2]! + 1;
          if (tr < v) v = tr;
        }
        if (v > BIG) v = BIG;
        rows[r + j] = v;
        if (v < min) min = v;
      }
      if (hi < m) rows[r + hi + 1] = BIG;
      if (min > maxD) continue;
      const t = termAt[node]!;
      if (t >= 0 && hi === m && rows[r + m]! <= maxD) onMatch(t, rows[r + m]!);
      if (depth === maxDepth) continue;
      for (let ch = firstChild[node]!; ch !== -1; ch = nextSibling[ch]!) {
        if (maxLen[ch]! < minLen) continue;
        if (sp === stackNode.length) {
          const grownNode = new Int32Array(sp * 2);
          grownNode.set(stackNode);
          const grownDepth = new Int32Array(sp * 2);
          grownDepth.set(stackDepth);
          this.stackNode = stackNode = grownNode;
          this.stackDepth = stackDepth = grownDepth;
        }
        stackNode[sp] = ch;
        stackDepth[sp++] = depth + 1;
      }
    }
  }
}
