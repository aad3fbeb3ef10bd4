import type { EngineQuery, EngineResult } from "../search-engine.ts";
import { passesPlatformFilter } from "../../domain/platform-values.ts";
import { identityKey, normaliseRepositoryUrl, repositoryName, tokenise } from "../../domain/text.ts";
import { identityHash, type IndexData } from "./build-index.ts";
import { partitionPoint } from "./binary-search.ts";
import { BoundedMemo } from "../../domain/bounded-memo.ts";
import { allowedTypos, exactIndex, prefixRange } from "./sorted-terms.ts";
import { stemmer } from "stemmer";
import { NOISE_WORDS } from "../../domain/text.ts";
import { SYNONYM_PHRASES } from "../../domain/synonyms.ts";
import { DEFAULT_WEIGHTS, KIND_EXACT, KIND_PREFIX, KIND_STEM, KIND_TYPO1, TIER_CLASSES, TIER_IDENTITY, type RankingWeights } from "../../domain/ranking.ts";

const byLength = (v: number[]) => v.length;

/** Every field of the query in a fixed order; strings are length-prefixed, so no value can spell another query's key. */
function resultKey(q: EngineQuery): string {
  const f = (v: string | undefined) => (v === undefined ? "-" : `${v.length}:${v}`);
  const ids = q.ids === undefined ? "-" : `${q.ids.length}:${q.ids.map(f).join("")}`;
  return `${f(q.search)}|${f(q.repositoryUrl)}|${f(q.appNode)}|${f(q.os)}|${f(q.accelerator)}|${q.includeBanned ? 1 : 0}|${ids}|${q.offset}|${q.limit}`;
}

/** Query tokens beyond this many are ignored (a 512-character search must stay cheap). */
export const MAX_QUERY_TOKENS = 16;

const DOC_SPACE = 2 ** 24;
/** Relevance is quantised to this many steps per unit of score (the score stays under SCORE_CEILING). */
const SCORE_STEPS = 2 ** 18;
const SCORE_CEILING = 4;
const SCORE_SPACE = SCORE_CEILING * SCORE_STEPS;
/** Above the score: [app-node whole/partial (2 bits)][not an exact id/name (1 bit)]. */
const NOT_EXACT = 1;

/** A match code: 0 = none, else 1 + tier * 8 + kind. */
const code = (tier: number, kind: number) => 1 + tier * 8 + kind;
/** What each match code is worth: field weight × match-kind weight. */
function contributions(w: RankingWeights, field: readonly number[] = w.field): Float64Array {
  const out = new Float64Array(32);
  for (let tier = 0; tier < field.length; tier++) for (let kind = 0; kind < w.kind.length; kind++) out[code(tier, kind)] = field[tier]! * w.kind[kind]!;
  return out;
}

/** Joined neighbours and abbreviations of a query beyond its words: at most this many. */
const MAX_EXTRA_SLOTS = 16;

/**
 * What a query asks of the dictionary: its words (slots 0..words-1, each with a weight) and
 * extra slots that stand for several neighbouring words at once (their joined form, or an
 * abbreviation), each covering those words' slots.
 */
interface QueryPlan {
  /** `classLike`: typed in CamelCase (`FaceDetailer`), so a node class of that name answers as well as a pack name. */
  slots: { term: string; prefix: boolean; word: boolean; classLike: boolean }[];
  weights: Float64Array;
  totalWeight: number;
  /** Per extra slot (index from `words`), the word slots it covers. */
  covers: number[][];
  words: number;
}

function planQuery(search: string, raw: readonly string[], noiseWeight: number): QueryPlan {
  const camel = new Set(search.split(/\s+/).filter((w) => /\p{Ll}\p{Lu}/u.test(w)).map((w) => tokenise(w).join("")));
  const slotOf = new Map<string, number>();
  const slots: QueryPlan["slots"] = [];
  const last = raw.length - 1;
  for (const t of raw) {
    if (!slotOf.has(t)) {
      slotOf.set(t, slots.length);
      slots.push({ term: t, prefix: false, word: true, classLike: camel.has(t) });
    }
  }
  // Only the query's last word is still being typed; it alone matches as a prefix.
  slots[slotOf.get(raw[last]!)!]!.prefix = true;
  const words = slots.length;
  const weights = new Float64Array(words);
  let totalWeight = 0;
  for (let i = 0; i < words; i++) totalWeight += weights[i] = NOISE_WORDS.has(slots[i]!.term) ? noiseWeight : 1;
  const covers: number[][] = [];
  const extra = (term: string, prefix: boolean, from: number, to: number) => {
    if (covers.length >= MAX_EXTRA_SLOTS || slotOf.has(term)) return;
    slotOf.set(term, slots.length);
    slots.push({ term, prefix, word: false, classLike: false });
    const covered = new Set<number>();
    for (let k = from; k < to; k++) covered.add(slotOf.get(raw[k]!)!);
    covers.push([...covered]);
  };
  for (let i = 0; i < raw.length; i++) {
    for (const { words: phrase, term } of SYNONYM_PHRASES) {
      if (i + phrase.length <= raw.length && phrase.every((w, k) => raw[i + k] === w)) extra(term, false, i, i + phrase.length);
    }
    let joined = raw[i]!;
    for (let k = i + 1; k < Math.min(raw.length, i + 4); k++) {
      joined += raw[k]!;
      extra(joined, k === last, i, k + 1);
    }
  }
  return { slots, weights, totalWeight, covers, words };
}

/**
 * Search over one immutable IndexData. Scratch arrays are reused between queries (stamped by a
 * generation counter instead of cleared); that is safe because a search runs synchronously.
 *
 * Sort key, smaller first, one float64: [app-node whole/partial (2 bits)][not exact id/name (1 bit)]
 * [score ceiling − relevance score, quantised (20 bits)][doc number (24 bits)]. The score:
 * the weighted share of the query's words found (each word by its best field and match kind;
 * filler words weigh little), phrase bonuses for neighbouring words found joined, and a bounded
 * popularity term (see domain/ranking.ts).
 */
export class IndexSearcher {
  private gen = 0;
  private readonly docStamp: Int32Array;
  /** Per doc stamped this search, its candidate number. */
  private readonly candOf: Int32Array;
  private readonly cand: Int32Array;
  /** Per candidate, the best match code of each slot of the query (candidate × slots). */
  private codes = new Uint8Array(1 << 16);
  private readonly repoStamp: Int32Array;
  private readonly appStamp: Int32Array;
  private readonly idStamp: Int32Array;
  private readonly appRel: Uint8Array;
  private readonly keys: Float64Array;
  /**
   * Typo expansions by token: [term index, edits, …]. Real traffic repeats its words, and the
   * trie walk costs far more than the rest of a token's matching. Tied to this immutable index,
   * so a reindex starts with an empty cache.
   */
  private readonly fuzzyCache = new BoundedMemo("typo", byLength);
  /** The same for app node name scans (a substring scan over every name). */
  private readonly appNameCache = new BoundedMemo("app_name", byLength);
  /** The dictionary terms sharing a token's stem (`removal` for `remove`), by token. */
  private readonly stemCache = new BoundedMemo("stem", byLength);
  /**
   * Whole results by query: the same few hundred queries make most of a registry's traffic
   * (the Manager's list pages, popular names), and a result over this immutable index never
   * changes. Weighed by the nodes held (the nodes themselves are shared with the index): the
   * route keeps each result's page text for as long as the result lives, so 50,000 nodes bound
   * that text too, to some 25 MiB.
   */
  private readonly results = new BoundedMemo("result", (r: EngineResult) => r.nodes.length + 1, 16_384, 50_000);

  private readonly contrib: Float64Array;
  /** For a word typed like a class name: a class match is worth a name match. */
  private readonly contribClassLike: Float64Array;
  private readonly popularity: Float32Array;

  constructor(readonly data: IndexData, private readonly weights: RankingWeights = DEFAULT_WEIGHTS) {
    this.contrib = contributions(weights);
    const field = [...weights.field];
    field[TIER_CLASSES] = field[TIER_IDENTITY]!;
    this.contribClassLike = contributions(weights, field);
    this.popularity = new Float32Array(data.n);
    for (let d = 0; d < data.n; d++) this.popularity[d] = weights.percentileShare * data.popularity[d]! + (1 - weights.percentileShare) * data.popularityLog[d]!;
    const n = Math.max(1, data.n);
    this.docStamp = new Int32Array(n);
    this.candOf = new Int32Array(n);
    this.cand = new Int32Array(n);
    this.repoStamp = new Int32Array(n);
    this.appStamp = new Int32Array(n);
    this.idStamp = new Int32Array(n);
    this.appRel = new Uint8Array(n);
    this.keys = new Float64Array(n);
  }

  /** A search uses one generation plus one per token; start over long before int32 runs out. */
  private nextGen(): number {
    if (this.gen >= 0x7fff0000) {
      this.gen = 0;
      this.docStamp.fill(0);
      this.repoStamp.fill(0);
      this.appStamp.fill(0);
      this.idStamp.fill(0);
    }
    return ++this.gen;
  }

  /** The result is shared between equal queries: callers read it and never change it. */
  search(q: EngineQuery): EngineResult {
    return this.results.getOrCompute(resultKey(q), () => this.compute(q));
  }

  private compute(q: EngineQuery): EngineResult {
    const D = this.data;
    const n = D.n;
    const gen = this.nextGen();

    // Filters first: each one is a per-doc test that costs a lookup.
    const banned = D.banned;
    const includeBanned = q.includeBanned;
    const osPass = q.os !== undefined ? D.osSets.map((s) => (passesPlatformFilter(s, q.os!, "os") ? 1 : 0)) : undefined;
    const accPass = q.accelerator !== undefined ? D.accSets.map((s) => (passesPlatformFilter(s, q.accelerator!, "accelerator") ? 1 : 0)) : undefined;
    const osSetOf = D.osSetOf;
    const accSetOf = D.accSetOf;

    let repoDocs: number[] | undefined;
    if (q.repositoryUrl !== undefined) repoDocs = this.markRepository(q.repositoryUrl, gen);
    let appDocs: number[] | undefined;
    if (q.appNode !== undefined) appDocs = this.markAppNode(q.appNode, gen);
    let idDocs: number[] | undefined;
    if (q.ids !== undefined) idDocs = this.markIds(q.ids, gen);
    const repoStamp = this.repoStamp;
    const appStamp = this.appStamp;
    const idStamp = this.idStamp;
    const appRel = this.appRel;
    const hasApp = appDocs !== undefined;

    const restricted = osPass !== undefined || accPass !== undefined || repoDocs !== undefined || appDocs !== undefined || idDocs !== undefined;
    const passes = (d: number): boolean =>
      (includeBanned || banned[d] === 0) &&
      (!restricted ||
        ((osPass === undefined || osPass[osSetOf[d]!] === 1) &&
          (accPass === undefined || accPass[accSetOf[d]!] === 1) &&
          (repoDocs === undefined || repoStamp[d] === gen) &&
          (appDocs === undefined || appStamp[d] === gen) &&
          (idDocs === undefined || idStamp[d] === gen)));

    const keys = this.keys;
    let nk = 0;

    const raw = q.search !== undefined ? tokenise(q.search).slice(0, MAX_QUERY_TOKENS) : [];
    if (q.search !== undefined && raw.length > 0) {
      const plan = planQuery(q.search, raw, this.weights.noise);
      const nc = this.collectText(plan, gen);
      const cand = this.cand;
      const exact = new Set(this.isExactId(q.search));
      const S = plan.slots.length;
      const codes = this.codes;
      const { weights, covers, words, totalWeight } = plan;
      const popularity = this.popularity;
      const { phrase: phraseWeight, popularity: popularityWeight } = this.weights;
      const contrib = this.contrib;
      const slotContrib = plan.slots.map((s) => (s.classLike ? this.contribClassLike : contrib));
      for (let i = 0; i < nc; i++) {
        const d = cand[i]!;
        if (!restricted && !hasApp ? !includeBanned && banned[d] !== 0 : !passes(d)) continue;
        const row = i * S;
        let text = 0;
        for (let t = 0; t < words; t++) text += weights[t]! * slotContrib[t]![codes[row + t]!]!;
        let phrase = 0;
        for (let e = 0; e < covers.length; e++) {
          const c = contrib[codes[row + words + e]!]!;
          if (c === 0) continue;
          phrase += c;
          // An extra slot answers for each word it covers, where that word did worse on its own.
          for (const t of covers[e]!) {
            const own = slotContrib[t]![codes[row + t]!]!;
            if (c > own) text += weights[t]! * (c - own);
          }
        }
        const score = text / totalWeight + phraseWeight * Math.min(phrase, 4) + popularityWeight * popularity[d]!;
        const high = (hasApp ? 2 - appRel[d]! : 0) * 2 + (exact.has(d) ? 0 : NOT_EXACT);
        keys[nk++] = (high * SCORE_SPACE + Math.round((SCORE_CEILING - score) * SCORE_STEPS)) * DOC_SPACE + d;
      }
    } else if (q.search !== undefined) {
      // A search made only of separators matches nothing that a person could mean.
      return { nodes: [], total: 0 };
    } else {
      const source = appDocs ?? repoDocs ?? idDocs;
      if (source) {
        for (const d of source) if (passes(d)) keys[nk++] = (hasApp ? 2 - appRel[d]! : 0) * DOC_SPACE + d;
      } else {
        // Popularity order is doc order: no sort needed, only count and slice.
        let total = 0;
        const out: number[] = [];
        const end = q.offset + q.limit;
        for (let d = 0; d < n; d++) {
          if (!passes(d)) continue;
          if (total >= q.offset && total < end) out.push(d);
          total++;
        }
        return { nodes: out.map((d) => D.docs[d]!), total };
      }
    }

    const total = nk;
    const top = selectTop(keys, nk, q.offset + q.limit);
    const nodes = [];
    for (let i = q.offset; i < top.length; i++) nodes.push(D.docs[top[i]! % DOC_SPACE]!);
    return { nodes, total };
  }

  /**
   * The docs whose id, name or repository name equals the query once case and separators are
   * set aside: found by the identity hash, then verified. (Such a doc always is a candidate:
   * it holds every query token exactly in its identity tier.)
   */
  private isExactId(search: string): number[] {
    const D = this.data;
    const queryTokens = tokenise(search);
    const key = queryTokens.join(" ");
    const h = identityHash(queryTokens);
    const index = D.identityIndex;
    const lo = (h >>> 8) * DOC_SPACE;
    const out: number[] = [];
    for (let i = lowerBoundF64(index, lo); i < index.length && index[i]! < lo + DOC_SPACE; i++) {
      const d = index[i]! - lo;
      const hashes = D.identityHashes;
      const r = D.docs[d]!;
      if (
        (hashes[d * 3] === h && identityKey(r.id) === key) ||
        (hashes[d * 3 + 1] === h && identityKey(r.name ?? "") === key) ||
        (hashes[d * 3 + 2] === h && identityKey(repositoryName(r.repository ?? "") ?? "") === key)
      ) {
        // Two slots of one doc may share the top hash bits: count the doc once.
        if (out[out.length - 1] !== d) out.push(d);
      }
    }
    return out;
  }

  private typoNeighbours(tok: string, typos: number): number[] {
    return this.fuzzyCache.getOrCompute(tok, () => {
      const near: number[] = [];
      this.data.trie.fuzzy(tok, typos, (i, dist) => near.push(i, dist));
      return near;
    });
  }

  /** The dictionary terms, outside [s, e), that share the token's stem: `removal` and `removing` for `remove`. */
  private stemNeighbours(tok: string): number[] {
    return this.stemCache.getOrCompute(tok, () => {
      const terms = this.data.terms;
      const stem = stemmer(tok);
      const out: number[] = [];
      if (stem.length < 3) return out;
      const [s, e] = prefixRange(terms, stem);
      // A stem shared by hundreds of terms is too short to say much.
      if (e - s > 512) return out;
      for (let i = s; i < e; i++) if (terms[i] !== tok && stemmer(terms[i]!) === stem) out.push(i);
      return out;
    });
  }

  /**
   * Match every slot of the plan against the dictionary; returns the number of candidate docs
   * in `cand`, with each candidate's best match code per slot in `codes`. A word's terms are a
   * contiguous range of the sorted dictionary (the last word: every term it prefixes; the
   * others: the term itself) plus its stem and typo neighbours outside that range. Postings are
   * stored in term order, so the range's postings are one run, read in place with no per-term
   * work: a one-character prefix spans thousands of terms (`c`: 4,900 of 63k at 5.9k nodes).
   * Only the range's first term can equal the token (it sorts before every longer term it prefixes).
   */
  private collectText(plan: QueryPlan, gen: number): number {
    const { terms, termStart } = this.data;
    const S = plan.slots.length;
    let nc = 0;
    for (let slot = 0; slot < S; slot++) {
      const { term: tok, prefix, word } = plan.slots[slot]!;
      let s: number;
      let e: number;
      if (prefix) [s, e] = prefixRange(terms, tok);
      else {
        s = exactIndex(terms, tok);
        e = s + 1;
        if (s < 0) s = e = 0;
      }
      if (s < e) {
        let from = termStart[s]!;
        if (terms[s] === tok) {
          nc = this.addPostings(from, termStart[s + 1]!, KIND_EXACT, gen, slot, S, nc);
          from = termStart[s + 1]!;
        }
        nc = this.addPostings(from, termStart[e]!, KIND_PREFIX, gen, slot, S, nc);
      }
      // Joined neighbours and abbreviations match as written; a word also by stem and typos.
      if (!word) continue;
      if (tok.length >= 4 && !NOISE_WORDS.has(tok)) {
        for (const i of this.stemNeighbours(tok)) if (i < s || i >= e) nc = this.addPostings(termStart[i]!, termStart[i + 1]!, KIND_STEM, gen, slot, S, nc);
      }
      const typos = allowedTypos(tok.length);
      if (typos > 0) {
        const near = this.typoNeighbours(tok, typos);
        for (let j = 0; j < near.length; j += 2) {
          const i = near[j]!;
          // A term in the range already counted at least as well (exact or prefix beats any typo).
          if (i >= s && i < e) continue;
          const kind = near[j + 1] === 0 ? KIND_EXACT : KIND_TYPO1 - 1 + near[j + 1]!;
          nc = this.addPostings(termStart[i]!, termStart[i + 1]!, kind, gen, slot, S, nc);
        }
      }
    }
    return nc;
  }

  /**
   * Record the postings [from, end) for one slot: a doc seen for the first time this search
   * becomes a candidate (its codes row cleared), and each slot keeps its best match code.
   */
  private addPostings(from: number, end: number, kind: number, gen: number, slot: number, S: number, nc: number): number {
    const { postDoc, postTier } = this.data;
    const { docStamp, candOf, cand, contrib } = this;
    let codes = this.codes;
    for (let p = from; p < end; p++) {
      const d = postDoc[p]!;
      let c: number;
      if (docStamp[d] !== gen) {
        docStamp[d] = gen;
        c = nc++;
        cand[c] = d;
        candOf[d] = c;
        if ((c + 1) * S > codes.length) {
          const grown = new Uint8Array(Math.max(codes.length * 2, (c + 1) * S));
          grown.set(codes);
          this.codes = codes = grown;
        }
        codes.fill(0, c * S, (c + 1) * S);
      } else c = candOf[d]!;
      const m = code(postTier[p]!, kind);
      const at = c * S + slot;
      if (contrib[m]! > contrib[codes[at]!]!) codes[at] = m;
    }
    return nc;
  }

  /** The docs of these ids (the list's `node_id`), stamped with this generation. */
  private markIds(ids: readonly string[], gen: number): number[] {
    const out: number[] = [];
    for (const id of ids) {
      const d = this.data.byId.get(id);
      if (d === undefined || this.idStamp[d] === gen) continue;
      this.idStamp[d] = gen;
      out.push(d);
    }
    return out;
  }

  /** Substring of the normalised repository URL; marks docs with `gen`, returns them (in no order: the page is ranked by key). */
  private markRepository(query: string, gen: number): number[] {
    const D = this.data;
    const needle = normaliseRepositoryUrl(query);
    const out: number[] = [];
    if (!needle || needle.includes("\n")) return out;
    const text = D.repoText;
    const starts = D.repoStart;
    let from = 0;
    for (;;) {
      const at = text.indexOf(needle, from);
      if (at < 0) break;
      const d = upperBound(starts, at) - 1;
      const end = starts[d + 1]! - 1;
      if (at + needle.length <= end && this.repoStamp[d] !== gen) {
        this.repoStamp[d] = gen;
        out.push(d);
      }
      from = end + 1;
    }
    return out;
  }

  /**
   * App node names containing `needle`: [name id, 2 whole / 1 partial, …] in name order,
   * remembered. A needle of three characters or more checks only the names holding its rarest
   * trigram; a shorter one scans every name.
   */
  private appNamesMatching(needle: string): number[] {
    return this.appNameCache.getOrCompute(needle, () => {
      const D = this.data;
      const names: number[] = [];
      const candidates = D.appTrigrams.candidates(needle);
      if (candidates !== undefined) {
        for (let c = 0; c < candidates.length; c++) {
          const name = D.appNames[candidates[c]!]!;
          const at = name.indexOf(needle);
          if (at >= 0) names.push(candidates[c]!, name.length === needle.length ? 2 : 1);
        }
        return names;
      }
      const text = D.appText;
      let from = 0;
      for (;;) {
        const at = text.indexOf(needle, from);
        if (at < 0) break;
        const nameId = upperBound(D.appStart, at) - 1;
        const start = D.appStart[nameId]!;
        const end = D.appStart[nameId + 1]! - 1;
        if (at + needle.length <= end) names.push(nameId, at === start && at + needle.length === end ? 2 : 1);
        from = end + 1;
      }
      return names;
    });
  }

  /** Case-insensitive match of app node names (2 = a whole name, 1 = part of one); marks docs with `gen`, returns them in no order. */
  private markAppNode(query: string, gen: number): number[] {
    const D = this.data;
    const needle = query.toLowerCase();
    const out: number[] = [];
    if (!needle || needle.includes("\n")) return out;
    const mark = (nameId: number, rel: number) => {
      for (let p = D.appDocStart[nameId]!, e = D.appDocStart[nameId + 1]!; p < e; p++) {
        const d = D.appDocs[p]!;
        if (this.appStamp[d] !== gen) {
          this.appStamp[d] = gen;
          this.appRel[d] = rel;
          out.push(d);
        } else if (rel > this.appRel[d]!) this.appRel[d] = rel;
      }
    };
    const names = this.appNamesMatching(needle);
    for (let j = 0; j < names.length; j += 2) mark(names[j]!, names[j + 1]!);
    return out;
  }
}

function lowerBoundF64(a: Float64Array, v: number): number {
  return partitionPoint(0, a.length, (i) => a[i]! < v);
}

function upperBound(a: Int32Array, v: number): number {
  return partitionPoint(0, a.length, (i) => a[i]! <= v);
}

/** The k smallest keys in ascending order: a bounded max-heap when k is small, else a full sort. */
export function selectTop(keys: Float64Array, n: number, k: number): Float64Array {
  if (k <= 0 || n === 0) return new Float64Array(0);
  if (k * 4 >= n) return keys.slice(0, n).sort().subarray(0, Math.min(k, n));
  const heap = new Float64Array(k);
  let size = 0;
  for (let i = 0; i < n; i++) {
    const v = keys[i]!;
    if (size < k) {
      let j = size++;
      heap[j] = v;
      while (j > 0) {
        const parent = (j - 1) >> 1;
        if (heap[parent]! >= heap[j]!) break;
        const t = heap[parent]!;
        heap[parent] = heap[j]!;
        heap[j] = t;
        j = parent;
      }
    } else if (v < heap[0]!) {
      heap[0] = v;
      let j = 0;
      for (;;) {
        const l = 2 * j + 1;
        if (l >= k) break;
        const r = l + 1;
        const c = r < k && heap[r]! > heap[l]! ? r : l;
        if (heap[c]! <= heap[j]!) break;
        const t = heap[c]!;
        heap[c] = heap[j]!;
        heap[j] = t;
        j = c;
      }
    }
  }
  return heap.subarray(0, size).sort();
}
