import type { StoredNode } from "../../domain/catalog-record.ts";
import { TermTrie } from "./term-trie.ts";
import { TrigramIndex } from "./trigram-index.ts";
import { normaliseRepositoryUrl, tokenise } from "../../domain/text.ts";
import { GrowInt32, GrowUint8, lowerCode, TermTable } from "./term-table.ts";
import { TIER_AUTHOR, TIER_CLASSES, TIER_DESCRIPTION, TIER_IDENTITY } from "../../domain/ranking.ts";
import { popularityLogScale, popularityOrder, popularityPercentiles } from "../../domain/popularity.ts";
import { AppNodeNames } from "./app-node-names.ts";
import { PlatformSets } from "./platform-sets.ts";
import { RepositoryText } from "./repository-text.ts";

export { identityHash } from "./term-table.ts";

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

/** Whether text[from, to) is `lower` but for the case of ASCII letters. */
function sameFolded(text: string, from: number, to: number, lower: string): boolean {
  if (to - from !== lower.length) return false;
  for (let i = from; i < to; i++) if (lowerCode(text.charCodeAt(i)) !== lower.charCodeAt(i - from)) return false;
  return true;
}

/** Where `url.replace(/(\.git)?\/*$/, "")` would end, without making the string. */
function writtenRepositoryEnd(url: string): number {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 47) end--;
  return end >= 4 && url.startsWith(".git", end - 4) ? end - 4 : end;
}

const yieldToEventLoop = () => new Promise<void>((r) => setImmediate(r));

/**
 * A pack's identity tier: its id, name and repository name, each as typed and split into its
 * name parts, with their identity hashes (three slots per doc) for the exact-name rule.
 */
function addIdentity(
  r: StoredNode,
  url: string,
  d: number,
  table: TermTable,
  pairTerm: GrowInt32,
  pairTier: GrowUint8,
  identityHashes: Int32Array,
): void {
  identityHashes[d * 3] = table.addText(r.id, d, TIER_IDENTITY, pairTerm, pairTier);
  table.addNameParts(r.id, 0, r.id.length, false, true, d, TIER_IDENTITY, pairTerm, pairTier);
  if (r.name) {
    identityHashes[d * 3 + 1] = table.addText(r.name, d, TIER_IDENTITY, pairTerm, pairTier);
    table.addNameParts(r.name, 0, r.name.length, true, true, d, TIER_IDENTITY, pairTerm, pairTier);
  }
  // The repository name as written (its capitals are lost in the normalised URL).
  const repoAlias = url.includes("/") ? url.slice(url.lastIndexOf("/") + 1) : "";
  if (repoAlias) {
    identityHashes[d * 3 + 2] = table.addText(repoAlias, d, TIER_IDENTITY, pairTerm, pairTier);
    const end = writtenRepositoryEnd(r.repository!);
    const from = end === 0 ? 0 : r.repository!.lastIndexOf("/", end - 1) + 1;
    table.addNameParts(
      r.repository!,
      from,
      end,
      false,
      sameFolded(r.repository!, from, end, repoAlias),
      d,
      TIER_IDENTITY,
      pairTerm,
      pairTier,
    );
  }
}

/**
 * Postings in CSR form, terms in sorted order: filled doc by doc (in doc order, from each pack's
 * run of (term, tier) pairs in visit order), so each term's list is doc-ordered.
 */
async function postingsInDocOrder(
  table: TermTable,
  pairTerm: GrowInt32,
  pairTier: GrowUint8,
  pairStart: Int32Array,
  visitOf: Int32Array,
  n: number,
) {
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
    const at = visitOf[doc]!;
    for (let p = pairStart[at]!, e = pairStart[at + 1]!; p < e; p++) {
      const s = rank[pairTerm.a[p]!]!;
      const slot = cursor[s]!++;
      postDoc[slot] = doc;
      postTier[slot] = pairTier.a[p]!;
    }
  }
  await yieldToEventLoop();
  return { sortedTerms, termStart, postDoc, postTier };
}

/**
 * Build a fresh index. Deleted nodes are left out entirely. Docs are numbered in popularity
 * order, so the last tie-break of every ranking is the doc number itself. The build yields to
 * the event loop now and then, so the old index keeps answering while a new one is built.
 */
export async function buildIndex(
  records: readonly StoredNode[],
  onProgress?: (indexed: number, total: number) => void,
): Promise<IndexData> {
  const live = records.filter((r) => r.status !== "NodeStatusDeleted");
  const n = live.length;
  if (n > MAX_DOCS) throw new Error(`the embedded index holds at most ${MAX_DOCS} nodes, got ${n}`);
  // Docs are numbered in popularity order, but the packs are visited in the order given: that is
  // the order their records were read and allocated in, so the loop reads the heap forward
  // instead of jumping about a GiB of it for every pack.
  const visitOf = popularityOrder(live);
  // Sized once: an array grown element by element keeps up to half again as much room (4 MiB at 1M).
  const docs = new Array<StoredNode>(n);
  const docOf = new Int32Array(n);
  for (let doc = 0; doc < n; doc++) {
    docs[doc] = live[visitOf[doc]!]!;
    docOf[visitOf[doc]!] = doc;
  }

  const banned = new Uint8Array(n);
  const byId = new Map<string, number>();
  const identityHashes = new Int32Array(n * 3);

  const table = new TermTable();
  const pairTerm = new GrowInt32();
  const pairTier = new GrowUint8();
  /** Per visit position, where its pack's (term, tier) pairs start. */
  const pairStart = new Int32Array(n + 1);

  const repositories = new RepositoryText(n);
  const appNodes = new AppNodeNames(n);
  const osSets = new PlatformSets(n);
  const accSets = new PlatformSets(n);

  // Authors, publishers and tags recur across packs: split and look each one up once, then add
  // its term ids directly.
  const memo = new Map<string, Int32Array>();
  const idsOf = (text: string, split: (s: string) => string[]) => {
    let ids = memo.get(text);
    if (!ids) {
      ids = Int32Array.from(split(text), (t) => table.id(t));
      memo.set(text, ids);
    }
    return ids;
  };
  let d = 0;
  const addIds = (ids: Int32Array, tier: number) => {
    for (let i = 0; i < ids.length; i++) table.add(ids[i]!, d, tier, pairTerm, pairTier);
  };

  for (let at = 0; at < n; at++) {
    const r = live[at]!;
    d = docOf[at]!;
    // Of two packs with one id, the later doc answers, as a visit in doc order would leave it.
    const seen = byId.get(r.id);
    if (seen === undefined || seen < d) byId.set(r.id, d);
    if (r.status === "NodeStatusBanned") banned[d] = 1;
    pairStart[at] = pairTerm.len;

    const url = r.repository ? normaliseRepositoryUrl(r.repository).replace(/\n/g, " ") : "";
    addIdentity(r, url, d, table, pairTerm, pairTier, identityHashes);
    appNodes.startPack(at);
    if (r.app_node_names) for (const name of r.app_node_names) addIds(appNodes.add(name, table), TIER_CLASSES);
    if (r.tags) for (const tag of r.tags) addIds(idsOf(tag, tokenise), TIER_CLASSES);
    if (r.description) {
      table.addText(r.description, d, TIER_DESCRIPTION, pairTerm, pairTier, true);
    }
    if (r.author) addIds(idsOf(r.author, tokenise), TIER_AUTHOR);
    if (r.publisher?.id) addIds(idsOf(r.publisher.id, tokenise), TIER_AUTHOR);
    if (r.publisher?.name) addIds(idsOf(r.publisher.name, tokenise), TIER_AUTHOR);

    repositories.add(url);
    osSets.add(d, r.supported_os);
    accSets.add(d, r.supported_accelerators);

    // Every 1,024 nodes (tens of ms at 1M-node rates) the old index gets to answer waiting searches.
    if ((at & 1023) === 1023) {
      onProgress?.(at + 1, n);
      await yieldToEventLoop();
    }
  }
  pairStart[n] = pairTerm.len;
  // Before the postings are allocated: the repository text needs a second copy while it is put in doc order.
  const repository = repositories.finish(visitOf);
  const apps = appNodes.finish(visitOf);
  const os = osSets.finish();
  const acc = accSets.finish();

  const { sortedTerms, termStart, postDoc, postTier } = await postingsInDocOrder(table, pairTerm, pairTier, pairStart, visitOf, n);

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
    ...repository,
    ...apps,
    appTrigrams: new TrigramIndex(apps.appNames),
    osSetOf: os.setOf,
    osSets: os.sets,
    accSetOf: acc.setOf,
    accSets: acc.sets,
  };
}
