/**
 * A trie over the sorted term dictionary, for typo matching: a depth-first walk carries one row
 * of the edit-distance table per depth and abandons a subtree as soon as no cell of its row is
 * within the allowed distance.
 *
 * The walk's cost is memory latency, not arithmetic: each node it enters is a read from a trie
 * of megabytes, which misses the cache. So the trie is one Int32Array, four ints a node,
 * numbered breadth-first (a node's children are consecutive, and scanning them, the walk's inner
 * step, reads one run of memory), and it is path-compressed: a chain of single-child nodes that
 * end no term is one node with a label of several characters, read from one array of labels.
 * Most of a dictionary's trie is such chains (`videohelpersuite` past `videoh`): on the real
 * catalog 531k nodes of 12 bytes became 95k of 16 (and 0.5M label characters), 6.4 → 2.5 MB.
 *
 * The edit-distance rows themselves are bit vectors (see `walkBits`) for tokens of up to 32
 * characters, every real word; longer ones take the plain banded rows (`walkRows`).
 */
const STRIDE = 3;
/** Index of the term ending at the end of this node's label in the sorted dictionary, or -1. */
const TERM = 0;
/** The node's first child; its children end where the next node's begin. */
const CHILD = 1;
/** Where the node's label starts in `labels`; it ends where the next node's starts. */
const LABEL = 2;
/** Longest-term lengths are capped to fit beside the character; far beyond any query token (512 characters at most). */
const MAX_LEN_CAP = 0x7fff;
/** `walkBits` keeps q's prefixes 0..m in the bits of an int32: m <= 31. */
const MAX_BITS_LEN = 31;
/** `pushChildren`'s `needs` when a child's character cannot end its subtree's walk. */
const ANY_CHARACTER = -1;
/** `frontEdits` filters on a term's characters 2 to 4, so it needs terms (and queries) of four or more. */
const START_LEN = 4;

/** A hash of three UTF-16 code units, well mixed in its low bits. */
function tailHash(c1: number, c2: number, c3: number): number {
  let h = Math.imul(c1, 0x9e3779b1) ^ Math.imul(c2, 0x85ebca77) ^ Math.imul(c3, 0xc2b2ae3d);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  return h ^ (h >>> 12);
}

/** A trie of one character a node in insertion order: first child, next sibling (-1: none), the term ending at each node (-1: none). */
interface LinkedTrie {
  char: Uint16Array;
  first: Int32Array;
  next: Int32Array;
  termAt: Int32Array;
  size: number;
}

/** The linked trie of the sorted terms: each term adds the nodes past its common prefix with the one before. */
function linkedTrie(sortedTerms: readonly string[]): LinkedTrie {
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
    const g16 = (a: Uint16Array) => {
      const b = new Uint16Array(cap);
      b.set(a);
      return b;
    };
    const g32 = (a: Int32Array) => {
      const b = new Int32Array(cap).fill(-1);
      b.set(a);
      return b;
    };
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
  return { char, first, next, termAt, size };
}

/**
 * The length of the longest term under each node: children are numbered after their parents,
 * so one backwards pass sees every child before its parent.
 */
function longestTermBelow({ first, next, termAt, size }: LinkedTrie): Int32Array {
  const depthOf = new Int32Array(size);
  for (let node = 0; node < size; node++) {
    for (let ch = first[node]!; ch !== -1; ch = next[ch]!) depthOf[ch] = depthOf[node]! + 1;
  }
  const maxLen = depthOf; // overwritten from the back: a node's depth is read before its slot is
  for (let node = size - 1; node >= 0; node--) {
    let best = termAt[node]! >= 0 ? depthOf[node]! : 0;
    for (let ch = first[node]!; ch !== -1; ch = next[ch]!) if (maxLen[ch]! > best) best = maxLen[ch]!;
    maxLen[node] = best;
  }
  return maxLen;
}

/**
 * The linked trie's chains compressed (a node that is its parent's only child, under a parent
 * that ends no term, continues its parent's label) while it is renumbered breadth-first over
 * chain heads: the arrays `TermTrie` walks.
 */
function compressedBreadthFirst(
  { char, first, next, termAt, size }: LinkedTrie,
  maxLen: Int32Array,
): { nodes: Int32Array; info: Int32Array; labels: Uint16Array; count: number } {
  const chainsOn = (node: number) => node !== 0 && termAt[node] === -1 && first[node] !== -1 && next[first[node]!] === -1;
  // `order` lists old head numbers by new number; siblings keep their ascending order (the terms
  // were sorted), which `child` relies on.
  let heads = 1;
  for (let node = 0; node < size; node++) {
    if (!chainsOn(node)) for (let ch = first[node]!; ch !== -1; ch = next[ch]!) heads++;
  }
  const order = new Int32Array(heads);
  const nodes = new Int32Array((heads + 1) * STRIDE);
  const info = new Int32Array(heads);
  const labels = new Uint16Array(size - 1);
  let tail = 1;
  let count = 0;
  let used = 0;
  for (let i = 0; i < tail; i++, count++) {
    const head = order[i]!;
    nodes[i * STRIDE + LABEL] = used;
    let end = head;
    if (head !== 0) {
      labels[used++] = char[end]!;
      while (chainsOn(end)) {
        end = first[end]!;
        labels[used++] = char[end]!;
      }
    }
    info[i] = char[head]! | (Math.min(maxLen[head]!, MAX_LEN_CAP) << 16);
    nodes[i * STRIDE + TERM] = termAt[end]!;
    nodes[i * STRIDE + CHILD] = tail;
    for (let ch = first[end]!; ch !== -1; ch = next[ch]!) order[tail++] = ch;
  }
  nodes[count * STRIDE + CHILD] = count;
  nodes[count * STRIDE + LABEL] = used;
  return { nodes, info, labels, count };
}

export class TermTrie {
  /** STRIDE ints per node, plus one sentinel whose CHILD ends the last node's children and whose LABEL ends the last label. */
  private readonly nodes: Int32Array;
  /**
   * Per node, [first label character | longest term below << 16]: the UTF-16 code unit leading
   * to it, and the length of the longest term in its subtree (subtrees of too-short terms are
   * skipped). Apart from `nodes`, so that scanning a node's children, which a walk does for
   * every node it enters and mostly to turn them away, reads 4 bytes a child, not 12.
   */
  private readonly info: Int32Array;
  /** Every node's label, in node order. */
  private readonly labels: Uint16Array;
  readonly size: number;
  /** The walk's stack, kept between calls (searches run one at a time). */
  private stackNode = new Int32Array(4096);
  private stackDepth = new Int32Array(4096);
  /** Prefix walks: the fewest edits of any prefix hit on the way to the node (maxD + 1: none yet). */
  private stackBest = new Int32Array(4096);
  /** `walkBits`'s character masks: bit i of eq[c] says q[i - 1] is c. Set for one walk, then cleared. */
  private readonly eq = new Int32Array(0x10000);
  /**
   * Which first characters come before which next three, for every term of four or more
   * characters: per hash of characters 2 to 4 (`tailHash`), a 64-bit mask (two ints) of the
   * root's children (bit: the child's number among them, modulo 64) whose character begins a
   * term followed by those three. `frontEdits` starts a lookup at each of the root's children
   * only where its bit is set: one mask answers for all of them. The lookups went down subtrees
   * all over the trie, each step a cache miss in a busy process, and most ended within four
   * characters; a bit per child and per four-character start, in one array,
   * was still 98 misses. A hash collision or a shared bit only costs a lookup.
   */
  private readonly frontSeen: Int32Array;
  private readonly frontMask: number;

  constructor(sortedTerms: readonly string[]) {
    const linked = linkedTrie(sortedTerms);
    const { nodes, info, labels, count } = compressedBreadthFirst(linked, longestTermBelow(linked));
    this.nodes = nodes;
    this.info = info;
    this.labels = labels;
    this.size = count;
    // About two slots a term, from 2^12 to 2^18 slots of 8 bytes (2 MiB): terms share their
    // characters 2 to 4 far more than whole spellings (the 2M terms of the 1M-pack bench catalog have
    // 45,669 distinct ones, a sixth of 2^18).
    const log2Slots = Math.min(18, Math.max(12, Math.ceil(Math.log2(Math.max(1, sortedTerms.length) * 2))));
    this.frontSeen = new Int32Array(2 << log2Slots);
    this.frontMask = (1 << log2Slots) - 1;
    this.markFronts(sortedTerms);
  }

  /** `frontSeen`: for each term of START_LEN or more, its root child's bit under the hash of its characters 2 to 4. */
  private markFronts(sortedTerms: readonly string[]): void {
    // Sorted terms: those of one first character are consecutive, as the root's children are.
    let rootChild = -1;
    let firstChar = -1;
    for (let s = 0; s < sortedTerms.length; s++) {
      const t = sortedTerms[s]!;
      if (t.length === 0) continue;
      if (t.charCodeAt(0) !== firstChar) {
        firstChar = t.charCodeAt(0);
        rootChild++;
      }
      if (t.length < START_LEN) continue;
      const slot = this.frontSlot(t, 1);
      const bit = rootChild & 63;
      this.frontSeen[slot + (bit >>> 5)]! |= 1 << (bit & 31);
    }
  }

  /** Where in `frontSeen` the mask for the three characters s[from], s[from + 1], s[from + 2] is. */
  private frontSlot(s: string, from: number): number {
    return (tailHash(s.charCodeAt(from), s.charCodeAt(from + 1), s.charCodeAt(from + 2)) & this.frontMask) * 2;
  }

  /** The root's children (by number among them, bits modulo 64) that begin a term followed by q[from], q[from + 1], q[from + 2]; a superset. */
  private frontFollowing(q: string, from: number): [number, number] {
    const slot = this.frontSlot(q, from);
    return [this.frontSeen[slot]!, this.frontSeen[slot + 1]!];
  }

  /**
   * Every term within `maxD` edits of `q` (Damerau's optimal string alignment: insert, delete,
   * substitute, swap two neighbours), reported as (sorted term index, distance). As in
   * Meilisearch, a typo on the first character counts as two: with one typo allowed the first
   * character must match; with two, either it matches and the rest has up to two, or the whole
   * word is within one edit (reported as distance 2).
   *
   * With `onPrefix`, for a word still being typed, also every prefix of a term within 1 to `maxD`
   * edits of `q`, its first character q's own (as Meilisearch's prefix automaton: `crystol`
   * reaches `crystools` through `crystoo`), with its distance: every term it begins matches so.
   * Down one path, a longer prefix is reported again only with fewer edits, and not at all
   * where it is q itself (the terms q begins, which the caller matches as a plain prefix).
   */
  fuzzy(
    q: string,
    maxD: number,
    onMatch: (termIndex: number, distance: number) => void,
    onPrefix?: (prefix: string, distance: number) => void,
  ): void {
    this.walk(q, maxD, onMatch, onPrefix);
    if (maxD >= 2) this.frontEdits(q, (t) => onMatch(t, 2));
  }

  /** The walk from the node reached by q's first character, past that character. */
  private walk(
    q: string,
    maxD: number,
    onMatch: (termIndex: number, distance: number) => void,
    onPrefix?: (prefix: string, distance: number) => void,
  ): void {
    if (q.length === 0) return;
    const root = this.child(0, q.charCodeAt(0));
    if (root < 0) return;
    const rest = q.slice(1);
    if (rest.length <= MAX_BITS_LEN) this.walkBits(root, rest, maxD, onMatch, onPrefix, q[0]);
    else this.walkRows(root, rest, maxD, onMatch, onPrefix, q[0]);
  }

  /**
   * The terms one edit from `q` where the edit touches the first character: the only way a
   * term starting with another character can be one edit away. Each is an exact lookup, not
   * a walk (a walk from the root with one typo visits much of the trie).
   * Terms starting with q's own first character are the first walk's, at no more than 2.
   */
  private frontEdits(q: string, onMatch: (termIndex: number) => void): void {
    const rest = q.slice(1);
    // Each lookup gives a term index or -1; a term is reported once per way it is found.
    const found = [this.lookup(0, 0, rest)]; // the first character deleted
    if (q.length >= 2 && q[0] !== q[1]) found.push(this.lookup(0, 0, q[1]! + q[0]! + q.slice(2))); // the first two swapped
    const first = q.charCodeAt(0);
    const nodes = this.nodes;
    // Both spellings are as long as q or longer: with four characters or more, the masks can rule them out.
    const filtered = q.length >= START_LEN;
    const [replacedLo, replacedHi] = filtered ? this.frontFollowing(q, 1) : [-1, -1];
    const [insertedLo, insertedHi] = filtered ? this.frontFollowing(q, 0) : [-1, -1];
    const firstChild = nodes[CHILD]!;
    for (let ch = firstChild, end = nodes[STRIDE + CHILD]!; ch < end; ch++) {
      if ((this.info[ch]! & 0xffff) === first) continue;
      const bit = (ch - firstChild) & 63;
      const flag = 1 << (bit & 31);
      if (((bit < 32 ? replacedLo : replacedHi) & flag) !== 0) found.push(this.lookup(ch, 1, rest)); // the first character replaced
      if (((bit < 32 ? insertedLo : insertedHi) & flag) !== 0) found.push(this.lookup(ch, 1, q)); // a character inserted before it
    }
    for (const t of found) if (t >= 0) onMatch(t);
  }

  /** The term spelled by the path to `node` up to `at` characters into its label, followed by `s`; or -1. */
  private lookup(node: number, at: number, s: string): number {
    const nodes = this.nodes;
    const labels = this.labels;
    let i = 0;
    for (;;) {
      const end = nodes[(node + 1) * STRIDE + LABEL]!;
      for (let p = nodes[node * STRIDE + LABEL]! + at; p < end; p++, i++) {
        if (i === s.length || labels[p] !== s.charCodeAt(i)) return -1;
      }
      if (i === s.length) return node === 0 ? -1 : nodes[node * STRIDE + TERM]!;
      node = this.child(node, s.charCodeAt(i));
      if (node < 0) return -1;
      at = 0;
    }
  }

  /** The child of `node` whose label starts with `c`, or -1. */
  private child(node: number, c: number): number {
    const nodes = this.nodes;
    // Siblings are in ascending order (the trie is built from sorted terms): stop at the first past `c`.
    for (let ch = nodes[node * STRIDE + CHILD]!, end = nodes[(node + 1) * STRIDE + CHILD]!; ch < end; ch++) {
      const x = this.info[ch]! & 0xffff;
      if (x >= c) return x === c ? ch : -1;
    }
    return -1;
  }

  /**
   * The terms below `root`'s first label character whose rest is within `maxD` edits of `q`,
   * with their distances: the edit-distance automaton simulated with one int32 per allowed
   * distance (Wu and Manber's bit-parallel matching, with Hyyrö's transposition step). At depth
   * j (characters read past root's first), bit i of R[k] says those characters and q's first i
   * are within k edits: the same cells as the table row `walkRows` computes, as one bit each, so
   * a character costs a few word operations per k instead of a loop over the band. Once R[maxD]
   * is empty, no term below is within reach. Needs q.length <= MAX_BITS_LEN. With `onPrefix`,
   * `head` and the characters read so far are reported wherever all of q is within reach of them.
   */
  private walkBits(
    root: number,
    q: string,
    maxD: number,
    onMatch: (termIndex: number, distance: number) => void,
    onPrefix?: (prefix: string, distance: number) => void,
    head = "",
  ): void {
    const m = q.length;
    const full = m === 31 ? -1 : (1 << (m + 1)) - 1; // bits 0..m
    const whole = 1 << m; // all of q
    const eq = this.eq;
    for (let i = 0; i < m; i++) eq[q.charCodeAt(i)]! |= 1 << (i + 1);
    const K = maxD + 1;
    const maxDepth = m + maxD;
    // R of depth j at (j + 1) * K: one all-zero row before depth 0 (no transposition there), then
    // depth 0, where q's first i characters are i deletions away.
    const R = new Int32Array((maxDepth + 2) * K);
    for (let k = 0; k <= maxD; k++) R[K + k] = ((2 << k) - 1) & full;
    const chars = new Int32Array(maxDepth + 1);
    const nodes = this.nodes;
    const labels = this.labels;
    const minLen = 1 + m - maxD;
    let sp = 0;
    this.stackNode[sp] = root;
    this.stackDepth[sp] = -1; // root's first label character is q's own, read already
    this.stackBest[sp++] = K;
    while (sp > 0) {
      const node = this.stackNode[--sp]!;
      let depth = this.stackDepth[sp]!;
      let best = this.stackBest[sp]!;
      let p = nodes[node * STRIDE + LABEL]!;
      const labelEnd = nodes[(node + 1) * STRIDE + LABEL]!;
      if (depth < 0) {
        depth = 0;
        p++;
        if (onPrefix) best = this.prefixHit(R, K, 0, whole, best, chars, head, onPrefix);
      }
      let r = R[(depth + 1) * K + maxD]!;
      for (; p < labelEnd; p++) {
        // Past m + maxD characters no term below can come back within reach.
        if (depth === maxDepth) {
          r = 0;
          break;
        }
        const c = labels[p]!;
        depth++;
        chars[depth] = c;
        const match = eq[c]!;
        // A swap of q[i-2] and q[i-1]: this character is q[i-2], the previous one q[i-1].
        const swap = (match << 1) & eq[chars[depth - 1]!]!;
        const row = (depth + 1) * K;
        const up = row - K;
        r = (R[up]! << 1) & match; // exact: a match on the diagonal
        R[row] = r;
        for (let k = 1; k <= maxD; k++) {
          const fewer = R[up + k - 1]!; // one edit fewer, one character back
          r =
            (((R[up + k]! << 1) & match) | // match
              (fewer << 1) | // substitute
              fewer | // this character inserted
              (r << 1) | // q's character deleted (r is this depth's R[k - 1])
              ((R[up - K + k - 1]! << 2) & swap)) & // swap two neighbours
            full;
          R[row + k] = r;
        }
        if (r === 0) break;
        if (onPrefix && best > 0 && (r & whole) !== 0) best = this.prefixHit(R, K, depth, whole, best, chars, head, onPrefix);
      }
      if (r === 0) continue;
      const row = (depth + 1) * K;
      const t = nodes[node * STRIDE + TERM]!;
      if (t >= 0 && (r & whole) !== 0) {
        let k = 0;
        while ((R[row + k]! & whole) === 0) k++;
        onMatch(t, k);
      }
      if (depth >= maxDepth) continue;
      // With every edit spent (no cell under maxD here, nor under maxD - 1 one character back), a
      // child lives only by matching q or completing a swap: test its character before pushing
      // it. Most children of a walk are such dead ends (four in five in a one-typo walk).
      let spent = true;
      for (let k = 0; spent && k < maxD; k++) spent = R[row + k] === 0 && (k === maxD - 1 || R[row - K + k] === 0);
      const swapNeeds = maxD >= 1 ? ((R[row - K + maxD - 1]! << 2) & eq[chars[depth]!]!) >>> 1 : 0;
      const needs = spent ? (r << 1) | swapNeeds : ANY_CHARACTER;
      sp = this.pushChildren(node, depth, best, minLen, sp, needs);
    }
    for (let i = 0; i < m; i++) eq[q.charCodeAt(i)] = 0;
  }

  /**
   * `walkBits` at `depth`: the fewest edits within which all of q is reached, if fewer than
   * `best`, is a prefix hit, reported unless exact (the caller's own prefix range); returns the
   * new best. A method, not a closure of the walk: one walk a word, and few hits a walk.
   */
  private prefixHit(
    R: Int32Array,
    K: number,
    depth: number,
    whole: number,
    best: number,
    chars: Int32Array,
    head: string,
    onPrefix: (prefix: string, distance: number) => void,
  ): number {
    const row = (depth + 1) * K;
    let k = 0;
    while (k < best && (R[row + k]! & whole) === 0) k++;
    if (k === best) return best;
    if (k > 0) onPrefix(head + String.fromCharCode.apply(null, chars.subarray(1, depth + 1) as unknown as number[]), k);
    return k;
  }

  /**
   * Push the children of `node` (entered at `depth`) that lead to a term of `minLen` or more and
   * whose first character's `eq` mask meets `needs` (or any, with ANY_CHARACTER); returns the new stack size.
   */
  private pushChildren(node: number, depth: number, best: number, minLen: number, sp: number, needs: number): number {
    const nodes = this.nodes;
    const info = this.info;
    const eq = this.eq;
    // Children are consecutive, and whether each can still reach a long enough term is its first int.
    for (let ch = nodes[node * STRIDE + CHILD]!, end = nodes[(node + 1) * STRIDE + CHILD]!; ch < end; ch++) {
      const x = info[ch]!;
      if (x >>> 16 < minLen || (needs !== ANY_CHARACTER && (eq[x & 0xffff]! & needs) === 0)) continue;
      if (sp === this.stackNode.length) {
        const grownNode = new Int32Array(sp * 2);
        grownNode.set(this.stackNode);
        const grownDepth = new Int32Array(sp * 2);
        grownDepth.set(this.stackDepth);
        const grownBest = new Int32Array(sp * 2);
        grownBest.set(this.stackBest);
        this.stackNode = grownNode;
        this.stackDepth = grownDepth;
        this.stackBest = grownBest;
      }
      this.stackNode[sp] = ch;
      this.stackDepth[sp] = depth;
      this.stackBest[sp++] = best;
    }
    return sp;
  }

  /** As `walkBits`, with a row of the edit-distance table per depth: for tokens too long for a bit per character. */
  private walkRows(
    root: number,
    q: string,
    maxD: number,
    onMatch: (termIndex: number, distance: number) => void,
    onPrefix?: (prefix: string, distance: number) => void,
    head = "",
  ): void {
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
    const nodes = this.nodes;
    const labels = this.labels;
    const minLen = 1 + m - maxD;
    let sp = 0;
    this.stackNode[sp] = root;
    this.stackDepth[sp] = -1;
    this.stackBest[sp++] = BIG;
    while (sp > 0) {
      const node = this.stackNode[--sp]!;
      let depth = this.stackDepth[sp]!;
      let best = this.stackBest[sp]!;
      let p = nodes[node * STRIDE + LABEL]!;
      const labelEnd = nodes[(node + 1) * STRIDE + LABEL]!;
      if (depth < 0) {
        depth = 0;
        p++;
      }
      // The smallest cell of this depth's row (depth 0's is 0).
      let min = depth === 0 ? 0 : -1;
      for (; p < labelEnd; p++) {
        if (depth === maxDepth) {
          min = BIG;
          break;
        }
        depth++;
        const r = depth * W;
        const u = r - W;
        const u2 = u - W;
        const c = labels[p]!;
        chars[depth] = c;
        const cPrev = depth > 1 ? chars[depth - 1]! : -1;
        const lo = depth - maxD > 1 ? depth - maxD : 1;
        const hi = depth + maxD < m ? depth + maxD : m;
        rows[r] = depth <= maxD ? depth : BIG;
        if (lo > 1) rows[r + lo - 1] = BIG;
        min = rows[r]!;
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
        if (min > maxD) break;
        // All of q within reach of the characters read so far (q is longer than maxD: never at depth 0).
        if (onPrefix && depth >= m - maxD && rows[r + m]! < best) {
          best = rows[r + m]!;
          if (best > 0) onPrefix(head + String.fromCharCode.apply(null, chars.subarray(1, depth + 1) as unknown as number[]), best);
        }
      }
      if (min > maxD) continue;
      const r = depth * W;
      const t = nodes[node * STRIDE + TERM]!;
      if (t >= 0 && depth >= m - maxD && rows[r + m]! <= maxD) onMatch(t, rows[r + m]!);
      if (depth < maxDepth) sp = this.pushChildren(node, depth, best, minLen, sp, ANY_CHARACTER);
    }
  }
}
