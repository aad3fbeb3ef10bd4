import type { StoredNode } from "../../domain/catalog-record.ts";
import { platformKey } from "../../domain/platform-values.ts";
import { TermTrie } from "./term-trie.ts";
import { appNodeNameTokens, identityKey, normaliseRepositoryUrl, repositoryName, tokenise } from "../../domain/text.ts";

/** Attribute tiers, best first: id/name, then app node names and tags, then the rest. */
export const TIER_IDENTITY = 0;
export const TIER_NODES_TAGS = 1;
export const TIER_TEXT = 2;

/** Doc numbers share a float64 with the relevance key, so they get 24 bits. */
export const MAX_DOCS = 1 << 24;

export interface IndexData {
  readonly docs: StoredNode[];
  readonly n: number;
  readonly banned: Uint8Array;
  readonly byId: Map<string, number>;
  /** identityKey(id | name | repository name) → docs */
  readonly exact: Map<string, number[]>;
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
  readonly appByName: Map<string, number>;
  readonly appDocStart: Int32Array;
  readonly appDocs: Int32Array;
  /** Docs share a handful of distinct supported_os / supported_accelerators lists: one id per list. */
  readonly osSetOf: Uint32Array;
  readonly osSets: string[][];
  readonly accSetOf: Uint32Array;
  readonly accSets: string[][];
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
  const exact = new Map<string, number[]>();
  const addExact = (key: string, d: number) => {
    if (!key) return;
    const list = exact.get(key);
    if (!list) exact.set(key, [d]);
    else if (list[list.length - 1] !== d) list.push(d);
  };

  const dict = new Map<string, number>();
  let lastDoc = new Int32Array(1 << 16).fill(-1);
  let pairPos = new Int32Array(1 << 16);
  let df = new Int32Array(1 << 16);
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

  // The same app node names recur across packs (and forks): split each one once.
  const appTokenMemo = new Map<string, string[]>();
  let d = 0;
  const add = (tokens: string[], tier: number) => {
    for (const t of tokens) {
      let id = dict.get(t);
      if (id === undefined) {
        id = dict.size;
        dict.set(t, id);
        if (id === lastDoc.length) {
          const grow = (a: Int32Array, fill?: number) => {
            const b = new Int32Array(a.length * 2);
            if (fill !== undefined) b.fill(fill);
            b.set(a);
            return b;
          };
          lastDoc = grow(lastDoc, -1);
          pairPos = grow(pairPos);
          df = grow(df);
        }
      }
      if (lastDoc[id] !== d) {
        lastDoc[id] = d;
        pairPos[id] = pairTerm.len;
        df[id]!++;
        pairTerm.push(id);
        pairTier.push(tier);
      } else if (tier < pairTier.a[pairPos[id]!]!) {
        pairTier.a[pairPos[id]!] = tier;
      }
    }
  };

  for (d = 0; d < n; d++) {
    const r = docs[d]!;
    byId.set(r.id, d);
    if (r.status === "NodeStatusBanned") banned[d] = 1;
    docPairStart[d] = pairTerm.len;

    const repoAlias = r.repository ? repositoryName(r.repository) : undefined;
    addExact(identityKey(r.id), d);
    if (r.name) addExact(identityKey(r.name), d);
    if (repoAlias) addExact(identityKey(repoAlias), d);

    add(tokenise(r.id), TIER_IDENTITY);
    if (r.name) add(tokenise(r.name), TIER_IDENTITY);
    if (repoAlias) add(tokenise(repoAlias), TIER_IDENTITY);
    if (r.app_node_names) {
      for (const name of r.app_node_names) {
        let tokens = appTokenMemo.get(name);
        if (!tokens) {
          tokens = appNodeNameTokens(name);
          appTokenMemo.set(name, tokens);
        }
        add(tokens, TIER_NODES_TAGS);
        const lower = name.toLowerCase();
        let aid = appIdOf.get(lower);
        if (aid === undefined) {
          aid = appNames.length;
          appIdOf.set(lower, aid);
          appNames.push(lower);
        }
        appPairName.push(aid);
        appPairDoc.push(d);
      }
    }
    if (r.tags) for (const tag of r.tags) add(tokenise(tag), TIER_NODES_TAGS);
    if (r.description) add(tokenise(r.description), TIER_TEXT);
    if (r.author) add(tokenise(r.author), TIER_TEXT);
    if (r.publisher?.id) add(tokenise(r.publisher.id), TIER_TEXT);
    if (r.publisher?.name) add(tokenise(r.publisher.name), TIER_TEXT);

    const url = r.repository ? normaliseRepositoryUrl(r.repository).replace(/\n/g, " ") : "";
    repoParts[d] = url;
    repoStart[d] = repoLen;
    repoLen += url.length + 1;

    osSetOf[d] = setOf(r.supported_os, osSetIds, osSets);
    accSetOf[d] = setOf(r.supported_accelerators, accSetIds, accSets);

    if ((d & 4095) === 4095) {
      onProgress?.(d + 1, n);
      await yieldToEventLoop();
    }
  }
  docPairStart[n] = pairTerm.len;
  repoStart[n] = repoLen;

  // Postings in CSR form, terms in sorted order; filled doc by doc, so each list is doc-ordered.
  const nTerms = dict.size;
  // The default sort compares UTF-16 code units, as `<` does in every lookup later.
  const sortedTerms = [...dict.keys()].sort();
  const rank = new Int32Array(nTerms);
  const termStart = new Int32Array(nTerms + 1);
  for (let s = 0; s < nTerms; s++) {
    const id = dict.get(sortedTerms[s]!)!;
    rank[id] = s;
    termStart[s + 1] = termStart[s]! + df[id]!;
  }
  await yieldToEventLoop();
  const total = pairTerm.len;
  const postDoc = new Int32Array(total);
  const postTier = new Uint8Array(total);
  const cursor = termStart.slice(0, nTerms);
  for (let doc = 0; doc < n; doc++) {
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
    byId,
    exact,
    terms: sortedTerms,
    trie: new TermTrie(sortedTerms),
    termStart,
    postDoc,
    postTier,
    repoText: repoParts.join("\n") + "\n",
    repoStart,
    appText: appNames.join("\n") + "\n",
    appStart,
    appByName: appIdOf,
    appDocStart,
    appDocs,
    osSetOf,
    osSets,
    accSetOf,
    accSets,
  };
}
