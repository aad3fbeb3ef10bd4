import type { StoredNode } from "../../domain/catalog-record.ts";
import { platformKey } from "../../domain/platform-values.ts";
import { TermTrie } from "./term-trie.ts";
import { TrigramIndex } from "./trigram-index.ts";
import { appNodeNameTokens, hyphenatedWords, joinedRuns, nameParts, namePartsIndexed, normaliseRepositoryUrl, tokenise } from "../../domain/text.ts";
import { TIER_AUTHOR, TIER_CLASSES, TIER_DESCRIPTION, TIER_IDENTITY } from "../../domain/ranking.ts";
import { popularityLogScale, popularityPercentiles } from "../../domain/popularity.ts";

/** Doc numbers share a float64 with the relevance key, so they get 24 bits. */
export const MAX_DOCS = 1 << 24;

export interface IndexData {
  readonly docs: StoredNode[];
  readonly n: number;
  readonly banned: Uint8Array;
  /** Popularity percentile per doc, 0 (least) to 1 (most popular); packs of equal popularity share one. */
  readonly popularity: Float32Array;
  /** Popularity per doc on a log scale, 0 to 1: log(1 + count) / log(1 + the largest count). */
  readonly popularityLog: Float32Array;
  readonly byId: Map<string, number>;
  /**
   * A hash of the identity key (tokens joined by one space) of the id, the name and the
   * repository name, three slots per doc (0 = none): an exact id/name match must have the
   * query's hash, so only those few docs are verified.
   */
  readonly identityHashes: Int32Array;
  /** Sorted (top 24 bits of an identity hash) × 2^24 + doc: the docs that may equal a query exactly, by binary search. */
  readonly identityIndex: Float64Array;
  readonly terms: string[];
  readonly trie: TermTrie;
  readonly termStart: Int32Array;
  readonly postDoc: Int32Array;
  readonly postTier: Uint8Array;
  /** Normalised repository URLs joined by "\n"; doc d spans [repoStart[d], repoStart[d+1]-1). */
  readonly repoText: string;
  readonly repoStart: Int32Array;
  /** Distinct lower-cased app node names joined by "\n", with the docs that provide each. */
  readonly appText: string;
  readonly appStart: Int32Array;
  /** The same names, one string each, and which of them hold each trigram. */
  readonly appNames: readonly string[];
  readonly appTrigrams: TrigramIndex;
  readonly appByName: Map<string, number>;
  readonly appDocStart: Int32Array;
  readonly appDocs: Int32Array;
  /** Docs share a handful of distinct supported_os / supported_accelerators lists: one id per list. */
  readonly osSetOf: Uint32Array;
  readonly osSets: string[][];
  readonly accSetOf: Uint32Array;
  readonly accSets: string[][];
}

/** FNV-1a over the tokens joined by one space, never 0 (0 marks an empty slot). */
export function identityHash(tokens: readonly string[]): number {
  let h = 0x811c9dc5;
  for (let t = 0; t < tokens.length; t++) {
    if (t > 0) h = Math.imul(h ^ 32, 0x01000193);
    const s = tokens[t]!;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  }
  return h === 0 ? 1 : h | 0;
}

function buildIdentityIndex(hashes: Int32Array, n: number): Float64Array {
  const out = new Float64Array(n * 3);
  let m = 0;
  for (let d = 0; d < n; d++) {
    for (let k = 0; k < 3; k++) {
      const h = hashes[d * 3 + k]!;
      if (h === 0 || (k > 0 && h === hashes[d * 3]) || (k > 1 && h === hashes[d * 3 + 1])) continue;
      out[m++] = (h >>> 8) * MAX_DOCS + d;
    }
  }
  return out.slice(0, m).sort();
}

const num = (v: number | undefined) => (v === undefined ? -Infinity : v);

/** Popularity order: search_ranking, downloads, repo_stars (all descending), then id. */
export function byPopularity(a: StoredNode, b: StoredNode): number {
  return (
    num(b.search_ranking) - num(a.search_ranking) ||
    num(b.downloads) - num(a.downloads) ||
    num(b.repo_stars) - num(a.repo_stars) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  ) || 0;
}

class GrowInt32 {
  a = new Int32Array(1 << 16);
  len = 0;
  push(v: number): void {
    if (this.len === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.len++] = v;
  }
}

class GrowUint8 {
  a = new Uint8Array(1 << 16);
  len = 0;
  push(v: number): void {
    if (this.len === this.a.length) {
      const b = new Uint8Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.len++] = v;
  }
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const ASCII_TEXT = /^[\x00-\x7f]*$/;

/**
 * The term dictionary under construction: an open-addressing hash table over term ids, so an
 * ASCII text can be tokenised in place (a token that is already known costs no allocation),
 * and per term: document frequency and the doc last seen.
 */
class TermTable {
  readonly terms: string[] = [];
  private hashes = new Int32Array(1 << 16);
  private slots = new Int32Array(1 << 17).fill(-1);
  private info = TermTable.newInfo(1 << 16);

  private static newInfo(terms: number): Int32Array {
    const info = new Int32Array(terms * 3);
    for (let i = 0; i < info.length; i += 3) info[i] = -1;
    return info;
  }

  get size(): number {
    return this.terms.length;
  }

  /** The id of a token given as a string (already normalised). */
  id(t: string): number {
    let h = FNV_OFFSET;
    for (let i = 0; i < t.length; i++) h = Math.imul(h ^ t.charCodeAt(i), FNV_PRIME);
    const mask = this.slots.length - 1;
    for (let at = h & mask; ; at = (at + 1) & mask) {
      const id = this.slots[at]!;
      if (id === -1) return this.insert(t, h, at);
      if (this.hashes[id] === h && this.terms[id] === t) return id;
    }
  }

  /** The id of the lower-cased ASCII token text[start, end), whose FNV hash (of lower-cased codes) is h. */
  idOfSlice(text: string, start: number, end: number, h: number): number {
    const mask = this.slots.length - 1;
    const len = end - start;
    for (let at = h & mask; ; at = (at + 1) & mask) {
      const id = this.slots[at]!;
      if (id === -1) return this.insert(text.slice(start, end).toLowerCase(), h, at);
      if (this.hashes[id] !== h) continue;
      const term = this.terms[id]!;
      if (term.length !== len) continue;
      let same = true;
      for (let i = 0; i < len; i++) {
        let c = text.charCodeAt(start + i);
        if (c >= 65 && c <= 90) c += 32;
        if (term.charCodeAt(i) !== c) {
          same = false;
          break;
        }
      }
      if (same) return id;
    }
  }

  private insert(t: string, h: number, at: number): number {
    const id = this.terms.length;
    this.terms.push(t);
    if (id === this.hashes.length) this.growTerms();
    this.hashes[id] = h;
    this.slots[at] = id;
    if (this.terms.length * 2 > this.slots.length) this.rehash();
    return id;
  }

  /** Record that doc `d` holds term `id` in `tier`, once per doc, keeping the best tier. */
  add(id: number, d: number, tier: number, pairTerm: GrowInt32, pairTier: GrowUint8): void {
    // Per term, [last doc, its pair's position, document frequency] side by side: one cache line.
    const info = this.info;
    const at3 = id * 3;
    if (info[at3] !== d) {
      info[at3] = d;
      info[at3 + 1] = pairTerm.len;
      info[at3 + 2]!++;
      pairTerm.push(id);
      pairTier.push(tier);
    } else {
      const at = info[at3 + 1]!;
      if (tier < pairTier.a[at]!) pairTier.a[at] = tier;
    }
  }

  df(id: number): number {
    return this.info[id * 3 + 2]!;
  }

  /**
   * Tokenise (as tokenise() does) and add every token of a text, allocating only for new terms.
   * Returns identityHash() of the tokens, computed on the way.
   */
  addText(text: string, d: number, tier: number, pairTerm: GrowInt32, pairTier: GrowUint8): number {
    if (!ASCII_TEXT.test(text)) {
      const tokens = tokenise(text);
      for (const t of tokens) this.add(this.id(t), d, tier, pairTerm, pairTier);
      return identityHash(tokens);
    }
    let start = -1;
    let h = FNV_OFFSET;
    let whole = FNV_OFFSET;
    let first = true;
    const n = text.length;
    for (let i = 0; i <= n; i++) {
      let c = i < n ? text.charCodeAt(i) : 32;
      if (c >= 65 && c <= 90) c += 32;
      if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
        if (start < 0) {
          start = i;
          h = FNV_OFFSET;
          if (!first) whole = Math.imul(whole ^ 32, FNV_PRIME);
          first = false;
        }
        h = Math.imul(h ^ c, FNV_PRIME);
        whole = Math.imul(whole ^ c, FNV_PRIME);
      } else if (start >= 0) {
        this.add(this.idOfSlice(text, start, i, h), d, tier, pairTerm, pairTier);
        start = -1;
      }
    }
    return whole === 0 ? 1 : whole | 0;
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = slots.length - 1;
    for (let id = 0; id < this.terms.length; id++) {
      let at = this.hashes[id]! & mask;
      while (slots[at] !== -1) at = (at + 1) & mask;
      slots[at] = id;
    }
    this.slots = slots;
  }

  private growTerms(): void {
    const size = this.hashes.length * 2;
    const info = TermTable.newInfo(size);
    info.set(this.info);
    const hashes = new Int32Array(size);
    hashes.set(this.hashes);
    this.info = info;
    this.hashes = hashes;
  }
}

const yieldToEventLoop = () => new Promise<void>((r) => setImmediate(r));

/**
 * Build a fresh index. Deleted nodes are left out entirely. Docs are numbered in popularity
 * order, so the last tie-break of every ranking is the doc number itself. The build yields to
 * the event loop now and then, so the old index keeps answering while a new one is built.
 */
export async function buildIndex(records: readonly StoredNode[], onProgress?: (indexed: number, total: number) => void): Promise<IndexData> {
  const docs = records.filter((r) => r.status !== "NodeStatusDeleted").sort(byPopularity);
  const n = docs.length;
  if (n > MAX_DOCS) throw new Error(`the embedded index holds at most ${MAX_DOCS} nodes, got ${n}`);

  const banned = new Uint8Array(n);
  const byId = new Map<string, number>();
  const identityHashes = new Int32Array(n * 3);

  const table = new TermTable();
  const pairTerm = new GrowInt32();
  const pairTier = new GrowUint8();
  const docPairStart = new Int32Array(n + 1);

  const repoParts: string[] = new Array(n);
  const repoStart = new Int32Array(n + 1);
  let repoLen = 0;

  const appIdOf = new Map<string, number>();
  const appNames: string[] = [];
  const appPairName = new GrowInt32();
  const appPairDoc = new GrowInt32();

  const osSetIds = new Map<string, number>();
  const osSets: string[][] = [];
  const osSetOf = new Uint32Array(n);
  const accSetIds = new Map<string, number>();
  const accSets: string[][] = [];
  const accSetOf = new Uint32Array(n);
  const setOf = (values: string[] | undefined, ids: Map<string, number>, sets: string[][]) => {
    if (!values || values.length === 0) {
      // Most nodes declare nothing: one shared open set, found without building a key.
      const open = ids.get("");
      if (open !== undefined) return open;
    }
    const list = values ?? [];
    const key = list.map(platformKey).sort().join("\n");
    let id = ids.get(key);
    if (id === undefined) {
      id = sets.length;
      ids.set(key, id);
      sets.push(list);
    }
    return id;
  };

  // App node names, authors and publishers recur across packs (and forks): split and look
  // each one up once, then add its term ids directly.
  const memo = new Map<string, Int32Array>();
  const idsOf = (text: string, split: (s: string) => string[]) => {
    let ids = memo.get(text);
    if (!ids) {
      ids = Int32Array.from(split(text), (t) => table.id(t));
      memo.set(text, ids);
    }
    return ids;
  };
  const appMemo = new Map<string, { ids: Int32Array; aid: number }>();
  let d = 0;
  const addIds = (ids: Int32Array, tier: number) => {
    for (let i = 0; i < ids.length; i++) table.add(ids[i]!, d, tier, pairTerm, pairTier);
  };
  const add = (tokens: string[], tier: number) => {
    for (const t of tokens) table.add(table.id(t), d, tier, pairTerm, pairTier);
  };

  for (d = 0; d < n; d++) {
    const r = docs[d]!;
    byId.set(r.id, d);
    if (r.status === "NodeStatusBanned") banned[d] = 1;
    docPairStart[d] = pairTerm.len;

    const url = r.repository ? normaliseRepositoryUrl(r.repository).replace(/\n/g, " ") : "";
    identityHashes[d * 3] = table.addText(r.id, d, TIER_IDENTITY, pairTerm, pairTier);
    add(namePartsIndexed(r.id), TIER_IDENTITY);
    if (r.name) {
      identityHashes[d * 3 + 1] = table.addText(r.name, d, TIER_IDENTITY, pairTerm, pairTier);
      const parts = nameParts(r.name);
      for (const p of parts) if (p.length > 1) table.add(table.id(p), d, TIER_IDENTITY, pairTerm, pairTier);
      add(joinedRuns(parts), TIER_IDENTITY);
    }
    // The repository name as written (its capitals are lost in the normalised URL).
    const repoAlias = url.includes("/") ? url.slice(url.lastIndexOf("/") + 1) : "";
    if (repoAlias) {
      identityHashes[d * 3 + 2] = table.addText(repoAlias, d, TIER_IDENTITY, pairTerm, pairTier);
      const written = r.repository!.replace(/(\.git)?\/*$/, "");
      add(namePartsIndexed(written.slice(written.lastIndexOf("/") + 1)), TIER_IDENTITY);
    }
    if (r.app_node_names) {
      for (const name of r.app_node_names) {
        let app = appMemo.get(name);
        if (!app) {
          const lower = name.toLowerCase();
          let aid = appIdOf.get(lower);
          if (aid === undefined) {
            aid = appNames.length;
            appIdOf.set(lower, aid);
            appNames.push(lower);
          }
          app = { ids: Int32Array.from(appNodeNameTokens(name), (t) => table.id(t)), aid };
          appMemo.set(name, app);
        }
        addIds(app.ids, TIER_CLASSES);
        appPairName.push(app.aid);
        appPairDoc.push(d);
      }
    }
    if (r.tags) for (const tag of r.tags) addIds(idsOf(tag, tokenise), TIER_CLASSES);
    if (r.description) {
      table.addText(r.description, d, TIER_DESCRIPTION, pairTerm, pairTier);
      add(hyphenatedWords(r.description), TIER_DESCRIPTION);
    }
    if (r.author) addIds(idsOf(r.author, tokenise), TIER_AUTHOR);
    if (r.publisher?.id) addIds(idsOf(r.publisher.id, tokenise), TIER_AUTHOR);
    if (r.publisher?.name) addIds(idsOf(r.publisher.name, tokenise), TIER_AUTHOR);

    repoParts[d] = url;
    repoStart[d] = repoLen;
    repoLen += url.length + 1;

    osSetOf[d] = setOf(r.supported_os, osSetIds, osSets);
    accSetOf[d] = setOf(r.supported_accelerators, accSetIds, accSets);

    // Every 1,024 nodes (tens of ms at 1M-node rates) the old index gets to answer waiting searches.
    if ((d & 1023) === 1023) {
      onProgress?.(d + 1, n);
      await yieldToEventLoop();
    }
  }
  docPairStart[n] = pairTerm.len;
  repoStart[n] = repoLen;

  // Postings in CSR form, terms in sorted order; filled doc by doc, so each list is doc-ordered.
  const nTerms = table.size;
  // The default sort compares UTF-16 code units, as `<` does in every lookup later.
  const sortedTerms = table.terms.slice().sort();
  const rank = new Int32Array(nTerms);
  const termStart = new Int32Array(nTerms + 1);
  for (let s = 0; s < nTerms; s++) {
    const id = table.id(sortedTerms[s]!);
    rank[id] = s;
    termStart[s + 1] = termStart[s]! + table.df(id);
  }
  await yieldToEventLoop();
  const total = pairTerm.len;
  const postDoc = new Int32Array(total);
  const postTier = new Uint8Array(total);
  const cursor = termStart.slice(0, nTerms);
  for (let doc = 0; doc < n; doc++) {
    if ((doc & 65535) === 65535) await yieldToEventLoop();
    for (let p = docPairStart[doc]!, e = docPairStart[doc + 1]!; p < e; p++) {
      const s = rank[pairTerm.a[p]!]!;
      const at = cursor[s]!++;
      postDoc[at] = doc;
      postTier[at] = pairTier.a[p]!;
    }
  }
  await yieldToEventLoop();

  const appStart = new Int32Array(appNames.length + 1);
  for (let i = 0; i < appNames.length; i++) appStart[i + 1] = appStart[i]! + appNames[i]!.length + 1;
  const appDocStart = new Int32Array(appNames.length + 1);
  for (let p = 0; p < appPairName.len; p++) appDocStart[appPairName.a[p]! + 1]!++;
  for (let i = 0; i < appNames.length; i++) appDocStart[i + 1]! += appDocStart[i]!;
  const appDocs = new Int32Array(appPairName.len);
  const appCursor = appDocStart.slice(0, appNames.length);
  for (let p = 0; p < appPairName.len; p++) appDocs[appCursor[appPairName.a[p]!]!++] = appPairDoc.a[p]!;

  onProgress?.(n, n);
  return {
    docs,
    n,
    banned,
    popularity: popularityPercentiles(docs),
    popularityLog: popularityLogScale(docs),
    byId,
    identityHashes,
    identityIndex: buildIdentityIndex(identityHashes, n),
    terms: sortedTerms,
    trie: new TermTrie(sortedTerms),
    termStart,
    postDoc,
    postTier,
    repoText: repoParts.join("\n") + "\n",
    repoStart,
    appText: appNames.join("\n") + "\n",
    appStart,
    appNames,
    appTrigrams: new TrigramIndex(appNames),
    appByName: appIdOf,
    appDocStart,
    appDocs,
    osSetOf,
    osSets,
    accSetOf,
    accSets,
  };
}
