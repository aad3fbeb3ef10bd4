import type { EngineQuery, EngineResult } from "../../ports/search-engine.ts";
import { DocFilter } from "./doc-filter.ts";
import { identityKey, normaliseRepositoryUrl, repositoryName, tokenise } from "../../domain/text.ts";
import { identityHash, type IndexData } from "./build-index.ts";
import { partitionPoint } from "./binary-search.ts";
import { BoundedMemo } from "../../fast/bounded-memo.ts";
import { nodeText, type JsonText } from "../../fast/node-output.ts";
import { allowedTypos, SortedTerms } from "./sorted-terms.ts";
import { selectTop, TopKeys } from "./top-keys.ts";
import { stemmer } from "stemmer";
import { NOISE_WORDS } from "../../domain/text.ts";
import { SYNONYM_PHRASES } from "../../domain/synonyms.ts";
import {
  DEFAULT_WEIGHTS,
  KIND_EXACT,
  KIND_PREFIX,
  KIND_STEM,
  KIND_TYPO1,
  matchStrength,
  STRENGTH_IDENTITY_WORD,
  TIER_AUTHOR,
  TIER_CLASSES,
  TIER_IDENTITY,
  type RankingWeights,
} from "../../domain/ranking.ts";

const byLength = (v: number[]) => v.length;

/** Below this many postings a mistyped prefix's range is never a common word's (a small catalog's quarter is a handful). */
const COMMON_RANGE_MIN = 1000;

/** A posting's tier (TIER_IDENTITY … TIER_AUTHOR) is below this. */
const TIERS = TIER_AUTHOR + 1;

/** Every field of the query in a fixed order; strings are length-prefixed, so no value can spell another query's key. */
function resultKey(q: EngineQuery): string {
  const ids = q.ids === undefined ? "-" : `${q.ids.length}:${q.ids.map(keyPart).join("")}`;
  return `${keyPart(q.search)}|${keyPart(q.repositoryUrl)}|${keyPart(q.appNode)}|${keyPart(q.os)}|${keyPart(q.accelerator)}|${q.includeBanned ? 1 : 0}|${ids}|${q.offset}|${q.limit}`;
}

// Module-level, as are the other per-search helpers: the gateway runs under tsx, which names every local closure as it is made (a defineProperty a call).
const keyPart = (v: string | undefined) => (v === undefined ? "-" : `${v.length}:${v}`);

/** A search string's candidates (doc numbers), their scores in score steps, and the docs it names exactly. */
interface TextMatches {
  cand: Int32Array;
  acc: Int32Array;
  exact: readonly number[];
}

/** The longest search string whose matches are remembered (`IndexSearcher.textMatches`). */
const MAX_REMEMBERED_SEARCH = 4;

const copyTextMatches = (m: TextMatches): TextMatches => ({ cand: m.cand.slice(), acc: m.acc.slice(), exact: m.exact });

/** Query tokens beyond this many are ignored (a 512-character search must stay cheap). */
export const MAX_QUERY_TOKENS = 16;

const DOC_SPACE = 2 ** 24;
/** Relevance is quantised to this many steps per unit of score (the score stays under SCORE_CEILING). */
const SCORE_STEPS = 2 ** 17;
const SCORE_CEILING = 4;
const SCORE_SPACE = SCORE_CEILING * SCORE_STEPS;
/** A candidate's match strength (`matchStrength` summed over its words) counts in units of SCORE_SPACE, above the score in the same integer. */
const STRENGTH_SPACE = MAX_QUERY_TOKENS * STRENGTH_IDENTITY_WORD * 2;
const RANK_SPACE = STRENGTH_SPACE * SCORE_SPACE;
/** Above the score: [app-node whole/partial (2 bits)][not an exact id/name (1 bit)]. */
const NOT_EXACT = 1;

/**
 * Match codes: 0 = none, else 1 + the (tier, kind) pair's place in the order of its strength,
 * then its worth, so a better match is a larger code and the hot loop compares bytes.
 * `worth[code]` is what it adds to the score, `strength[code]` to the strength above it.
 */
interface MatchCodes {
  codeOf: Uint8Array; // by tier * 8 + kind
  worth: Float64Array; // by code
  worthClassLike: Float64Array; // by code, for a word typed like a class name
  strength: Uint8Array; // by code
  strengthClassLike: Uint8Array; // by code, for a word typed like a class name
}

function matchCodes(w: RankingWeights): MatchCodes {
  const classField = [...w.field];
  classField[TIER_CLASSES] = classField[TIER_IDENTITY]!;
  const pairs: { at: number; worth: number; classLike: number; strength: number; strengthClassLike: number }[] = [];
  for (let tier = 0; tier < w.field.length; tier++) {
    for (let kind = 0; kind < w.kind.length; kind++) {
      pairs.push({
        at: tier * 8 + kind,
        worth: w.field[tier]! * w.kind[kind]!,
        classLike: classField[tier]! * w.kind[kind]!,
        strength: matchStrength(tier, kind),
        strengthClassLike: matchStrength(tier, kind, true),
      });
    }
  }
  pairs.sort((a, b) => a.strength - b.strength || a.worth - b.worth || b.at - a.at);
  const codes: MatchCodes = {
    codeOf: new Uint8Array(32),
    worth: new Float64Array(32),
    worthClassLike: new Float64Array(32),
    strength: new Uint8Array(32),
    strengthClassLike: new Uint8Array(32),
  };
  pairs.forEach((p, i) => {
    codes.codeOf[p.at] = i + 1;
    codes.worth[i + 1] = p.worth;
    codes.worthClassLike[i + 1] = p.classLike;
    codes.strength[i + 1] = p.strength;
    codes.strengthClassLike[i + 1] = p.strengthClassLike;
  });
  return codes;
}

/** Joined neighbours and abbreviations of a query beyond its words: at most this many. */
const MAX_EXTRA_SLOTS = 16;

/**
 * What a query asks of the dictionary: its words (slots 0..words-1, each with a weight) and
 * extra slots that stand for several neighbouring words at once (their joined form, or an
 * abbreviation), each covering those words' slots.
 */
interface QueryPlan {
  /**
   * `classLike`: typed in CamelCase (`FaceDetailer`), so a node class of that name answers as well as a pack name.
   * `addsOnly`: a filler word beside other words, which adds to the docs they match but brings in none of its own.
   * `completionsAddOnly`: the last word, beside other words: the longer terms it is a prefix of do the same.
   */
  slots: { term: string; prefix: boolean; word: boolean; classLike: boolean; addsOnly: boolean; completionsAddOnly: boolean }[];
  weights: Float64Array;
  totalWeight: number;
  /** Per extra slot (index from `words`), the word slots it covers. */
  covers: number[][];
  /** Per word slot, the extra slots (by slot number) that cover it. */
  coveredBy: number[][];
  words: number;
}

const NO_WORDS: ReadonlySet<string> = new Set();
const NO_PHRASES: typeof SYNONYM_PHRASES = [];
const PHRASES_BY_FIRST_WORD = new Map<string, (typeof SYNONYM_PHRASES)[number][]>();
for (const p of SYNONYM_PHRASES) {
  const list = PHRASES_BY_FIRST_WORD.get(p.words[0]!) ?? [];
  list.push(p);
  PHRASES_BY_FIRST_WORD.set(p.words[0]!, list);
}

function planQuery(search: string, raw: readonly string[], noiseWeight: number): QueryPlan {
  const camel =
    search === search.toLowerCase()
      ? NO_WORDS
      : new Set(
          search
            .split(/\s+/)
            .filter((w) => /\p{Ll}\p{Lu}/u.test(w))
            .map((w) => tokenise(w).join("")),
        );
  const slotOf = new Map<string, number>();
  const slots: QueryPlan["slots"] = [];
  const last = raw.length - 1;
  // Only the query's last word is still being typed; it alone matches as a prefix.
  const typing = raw[last]!;
  // Beside words that say something, a filler word (`comfyui` in `ComfyUI-Manager`) and the
  // completions of the word being typed (`u` in `video u`) only add to what those words find.
  // Alone they would bring in nearly every pack (5.7k of 5.9k for `comfyui`) to be read, scored
  // and counted. So the other words come first and make the candidates; then the last word, whose
  // exact form, stems and typos still make candidates; then the filler words.
  const content = raw.filter((t) => !NOISE_WORDS.has(t));
  const others = content.filter((t) => t !== typing);
  const ordered =
    content.length === 0 ? raw : [...others, ...(others.length < content.length ? [typing] : []), ...raw.filter((t) => NOISE_WORDS.has(t))];
  for (const t of ordered) {
    if (slotOf.has(t)) continue;
    slotOf.set(t, slots.length);
    const addsOnly = content.length > 0 && NOISE_WORDS.has(t);
    slots.push({
      term: t,
      prefix: t === typing,
      word: true,
      classLike: camel.has(t),
      addsOnly,
      completionsAddOnly: t === typing && !addsOnly && others.length > 0,
    });
  }
  const words = slots.length;
  const weights = new Float64Array(words);
  let totalWeight = 0;
  for (let i = 0; i < words; i++) totalWeight += weights[i] = NOISE_WORDS.has(slots[i]!.term) ? noiseWeight : 1;
  const covers: number[][] = [];
  const plan = { slots, covers, slotOf, raw };
  for (let i = 0; i < raw.length; i++) {
    for (const { words: phrase, term } of PHRASES_BY_FIRST_WORD.get(raw[i]!) ?? NO_PHRASES) {
      if (i + phrase.length <= raw.length && phrase.every((w, k) => raw[i + k] === w))
        addExtraSlot(plan, term, false, i, i + phrase.length);
    }
    let joined = raw[i]!;
    for (let k = i + 1; k < Math.min(raw.length, i + 4); k++) {
      joined += raw[k]!;
      addExtraSlot(plan, joined, k === last, i, k + 1);
    }
  }
  const coveredBy: number[][] = Array.from({ length: words }, () => []);
  covers.forEach((words, k) => {
    for (const t of words) coveredBy[t]!.push(slots.length - covers.length + k);
  });
  return { slots, weights, totalWeight, covers, coveredBy, words };
}

/** A slot standing for the words raw[from..to) at once (their joined form, or an abbreviation), unless the plan has it or is full. */
function addExtraSlot(
  plan: { slots: QueryPlan["slots"]; covers: number[][]; slotOf: Map<string, number>; raw: readonly string[] },
  term: string,
  prefix: boolean,
  from: number,
  to: number,
): void {
  const { slots, covers, slotOf, raw } = plan;
  if (covers.length >= MAX_EXTRA_SLOTS || slotOf.has(term)) return;
  slotOf.set(term, slots.length);
  slots.push({ term, prefix, word: false, classLike: false, addsOnly: false, completionsAddOnly: false });
  const covered = new Set<number>();
  for (let k = from; k < to; k++) covered.add(slotOf.get(raw[k]!)!);
  covers.push([...covered]);
}

/**
 * Search over one immutable IndexData. Scratch arrays are reused between queries (stamped by a
 * generation counter instead of cleared); that is safe because a search runs synchronously.
 *
 * Sort key, smaller first, one float64: [app-node whole/partial (2 bits)][not exact id/name (1 bit)]
 * [strength ceiling − match strength (7 bits)][score ceiling − relevance score, quantised (19 bits)]
 * [doc number (24 bits)]. The strength: each word's `matchStrength`, summed. The score:
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
  private codesUsed = 0;
  private readonly repoStamp: Int32Array;
  private readonly appStamp: Int32Array;
  private readonly idStamp: Int32Array;
  /** The docs equal to this search's identity key, stamped with its generation. */
  private readonly exactStamp: Int32Array;
  private readonly appRel: Uint8Array;
  private readonly keys: Float64Array;
  private readonly top = new TopKeys();
  /**
   * Typo expansions by token (`typoNeighbours`). Real traffic repeats its words, and the
   * trie walk costs far more than the rest of a token's matching. Tied to this immutable index,
   * so a reindex starts with an empty cache.
   */
  private readonly fuzzyCache = new BoundedMemo("typo", byLength);
  /** The same, widened (`typoNeighbours`), for a word being typed that begins no term. */
  private readonly widenedTypoCache = new BoundedMemo("typo", byLength);
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
  /**
   * What a search string matches, by the string: its candidates with their scores, and its
   * exact-name docs. Filters, pages and limits change the query but not these, and the short
   * prefixes a search box sends (`c`, `co`) come with every filter and page: a one-character
   * prefix reads 12k postings. Weighed by candidates (8 bytes each): at most 8 MiB. Only short
   * strings (MAX_REMEMBERED_SEARCH): longer ones seldom come again with another filter or page,
   * and copying their candidates cost more than the few hits saved.
   */
  private readonly textMatches = new BoundedMemo("text", (m: TextMatches) => m.cand.length + 1, 16_384, 1_000_000);

  private readonly match: MatchCodes;
  /** Scratch, refilled per search: what each match code adds to the score in each word slot (slot * 32 + code), in score steps. */
  private readonly slotGain = new Int32Array((MAX_QUERY_TOKENS + MAX_EXTRA_SLOTS) * 32);
  /** Scratch, per postings run of a word: its match code and score gain by the posting's tier. */
  private readonly runCode = new Uint8Array(TIERS);
  private readonly runGain = new Int32Array(TIERS);
  /** Scratch, per search: each slot's worth of each match code (slot * 32 + code), for the extra slots' sums. */
  private readonly slotWorth = new Float64Array((MAX_QUERY_TOKENS + MAX_EXTRA_SLOTS) * 32);
  /** The same for strength (0 for filler words, which weigh little in the score and nothing in the strength). */
  private readonly slotStrength = new Uint8Array((MAX_QUERY_TOKENS + MAX_EXTRA_SLOTS) * 32);
  /** Per candidate, its strength so far in units of SCORE_SPACE plus its score in score steps (popularity included). */
  private readonly acc: Int32Array;
  /** Per doc, popularity's part of the score in score steps. */
  private readonly popularitySteps: Int32Array;
  /** The plan of the search being collected (read by addPostings for the extra slots). */
  private plan: QueryPlan | undefined;
  private invTotal = 1;
  private readonly popularity: Float32Array;

  private readonly dict: SortedTerms;

  constructor(
    readonly data: IndexData,
    private readonly weights: RankingWeights = DEFAULT_WEIGHTS,
  ) {
    this.dict = new SortedTerms(data.terms);
    this.match = matchCodes(weights);
    this.popularity = new Float32Array(data.n);
    this.popularitySteps = new Int32Array(data.n);
    for (let d = 0; d < data.n; d++) {
      this.popularity[d] = weights.percentileShare * data.popularity[d]! + (1 - weights.percentileShare) * data.popularityLog[d]!;
      this.popularitySteps[d] = Math.round(weights.popularity * this.popularity[d]! * SCORE_STEPS);
    }
    const n = Math.max(1, data.n);
    this.docStamp = new Int32Array(n);
    this.candOf = new Int32Array(n);
    this.cand = new Int32Array(n);
    this.acc = new Int32Array(n);
    this.repoStamp = new Int32Array(n);
    this.appStamp = new Int32Array(n);
    this.idStamp = new Int32Array(n);
    this.exactStamp = new Int32Array(n);
    this.appRel = new Uint8Array(n);
    this.keys = new Float64Array(n);
    this.texts = new Array<JsonText | undefined>(data.n);
  }

  /** A search uses one generation plus one per token; start over long before int32 runs out. */
  private nextGen(): number {
    if (this.gen >= 0x7fff0000) {
      this.gen = 0;
      this.docStamp.fill(0);
      this.repoStamp.fill(0);
      this.appStamp.fill(0);
      this.idStamp.fill(0);
      this.exactStamp.fill(0);
    }
    return ++this.gen;
  }

  /** The result is shared between equal queries: callers never change it but for its page text (`resultPage`). */
  search(q: EngineQuery): EngineResult {
    return this.results.getOrCompute(resultKey(q), () => this.compute(q));
  }

  private compute(q: EngineQuery): EngineResult {
    const D = this.data;
    const n = D.n;
    const gen = this.nextGen();

    // Filters first: each one is a per-doc test that costs a lookup.
    let repoDocs: number[] | undefined;
    if (q.repositoryUrl !== undefined) repoDocs = this.markRepository(q.repositoryUrl, gen);
    let appDocs: number[] | undefined;
    if (q.appNode !== undefined) appDocs = this.markAppNode(q.appNode, gen);
    let idDocs: number[] | undefined;
    if (q.ids !== undefined) idDocs = this.markIds(q.ids, gen);
    const hasApp = appDocs !== undefined;
    const filter = new DocFilter(
      D,
      q,
      { repo: repoDocs && this.repoStamp, app: appDocs && this.appStamp, ids: idDocs && this.idStamp },
      gen,
    );
    const appRel = this.appRel;

    const keys = this.keys;
    let nk = 0;

    const tokens = q.search !== undefined ? tokenise(q.search) : [];
    if (q.search !== undefined && tokens.length > 0) {
      const search = q.search;
      const { cand, acc, exact } =
        search.length <= MAX_REMEMBERED_SEARCH
          ? this.textMatches.getOrCompute(search, () => this.matchText(search, tokens, gen), copyTextMatches)
          : this.matchText(search, tokens, gen);
      const nc = cand.length;
      const exactStamp = this.exactStamp;
      for (const d of exact) exactStamp[d] = gen;
      // A page deep into the matches keeps most of them: sorting them all is then cheaper than a heap.
      const want = q.offset + q.limit;
      const stream = want * 4 < nc;
      const top = this.top;
      nk = !filter.restricted
        ? this.rankUnfiltered(cand, acc, gen, filter.includeBanned, stream ? want : 0)
        : this.rankFiltered(cand, acc, gen, filter, hasApp, stream ? want : 0);
      if (stream) return this.page(top.sorted(), q.offset, nk);
    } else if (q.search !== undefined) {
      // A search made only of separators matches nothing that a person could mean.
      return { nodes: [], total: 0 };
    } else {
      const source = appDocs ?? repoDocs ?? idDocs;
      if (source) {
        for (const d of source) if (filter.passes(d)) keys[nk++] = (hasApp ? 2 - appRel[d]! : 0) * DOC_SPACE + d;
      } else {
        // Popularity order is doc order: no sort needed, only count and slice.
        let total = 0;
        const out: number[] = [];
        const end = q.offset + q.limit;
        for (let d = 0; d < n; d++) {
          if (!filter.passes(d)) continue;
          if (total >= q.offset && total < end) out.push(d);
          total++;
        }
        return { nodes: out.map((d) => D.docs[d]!), total };
      }
    }

    return this.page(selectTop(keys, nk, q.offset + q.limit, this.top), q.offset, nk);
  }

  /**
   * The keys of a search with no filter but banned packs: the common case, in a loop of its own
   * with no `DocFilter.passes` call and no app-node bits per doc (one loop for both was
   * slower). `want` > 0 offers them to the top-k; 0 writes them all to `keys`. Returns
   * how many pass.
   */
  private rankUnfiltered(cand: Int32Array, acc: Int32Array, gen: number, includeBanned: boolean, want: number): number {
    const banned = this.data.banned;
    const exactStamp = this.exactStamp;
    const keys = this.keys;
    const top = this.top;
    const nc = cand.length;
    let bar = want > 0 ? top.reset(want) : Infinity;
    let nk = 0;
    for (let i = 0; i < nc; i++) {
      const d = cand[i]!;
      if (!includeBanned && banned[d] !== 0) continue;
      const key = ((exactStamp[d] === gen ? RANK_SPACE : 2 * RANK_SPACE) - 1 - acc[i]!) * DOC_SPACE + d;
      if (want === 0) keys[nk] = key;
      else if (key < bar) bar = top.offer(key);
      nk++;
    }
    return nk;
  }

  /** As `rankUnfiltered`, for a search with filters (an app-node filter ranks whole names first). */
  private rankFiltered(cand: Int32Array, acc: Int32Array, gen: number, filter: DocFilter, hasApp: boolean, want: number): number {
    const exactStamp = this.exactStamp;
    const appRel = this.appRel;
    const keys = this.keys;
    const top = this.top;
    const nc = cand.length;
    let bar = want > 0 ? top.reset(want) : Infinity;
    let nk = 0;
    for (let i = 0; i < nc; i++) {
      const d = cand[i]!;
      if (!filter.passes(d)) continue;
      const high = (hasApp ? 2 - appRel[d]! : 0) * 2 + (exactStamp[d] === gen ? 0 : NOT_EXACT);
      const key = (high * RANK_SPACE + RANK_SPACE - 1 - acc[i]!) * DOC_SPACE + d;
      if (want === 0) keys[nk] = key;
      else if (key < bar) bar = top.offer(key);
      nk++;
    }
    return nk;
  }

  /**
   * Each doc's JSON text by doc number, from its first page on (the same object the record's own
   * cache holds). A page reads its nodes' texts here rather than by record: that lookup, a weak
   * map's, costs three cache misses a node in a busy process (the record, the map's table and
   * the entry).
   */
  private readonly texts: (JsonText | undefined)[];

  /** The result from the page's keys (ascending, from the first match) and the number of matches. */
  private page(top: Float64Array, offset: number, total: number): EngineResult {
    const docs = this.data.docs;
    const nodes = [];
    const texts = [];
    for (let i = offset; i < top.length; i++) {
      const d = top[i]! % DOC_SPACE;
      nodes.push(docs[d]!);
      texts.push((this.texts[d] ??= nodeText(docs[d]!)));
    }
    return { nodes, total, texts };
  }

  /** The search's candidates and their scores, in the scratch arrays (copied only if remembered). */
  private matchText(search: string, tokens: string[], gen: number): TextMatches {
    const raw = tokens.length > MAX_QUERY_TOKENS ? tokens.slice(0, MAX_QUERY_TOKENS) : tokens;
    const nc = this.collectText(planQuery(search, raw, this.weights.noise), gen);
    return { cand: this.cand.subarray(0, nc), acc: this.acc.subarray(0, nc), exact: this.isExactId(tokens) };
  }

  /**
   * The docs whose id, name or repository name equals the query once case and separators are
   * set aside: found by the identity hash, then verified. (Such a doc always is a candidate:
   * it holds every query token exactly in its identity tier.)
   */
  private isExactId(queryTokens: readonly string[]): number[] {
    const D = this.data;
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

  /**
   * A word's typo neighbours as [first term, end term, edits, …]: whole terms (end = first + 1),
   * and with `widen`, for the word still being typed when it begins no term as typed (`crystol`),
   * also the term ranges its mistyped prefixes begin (`crystoo` begins `crystools`), in the same
   * walk. Meilisearch widens every word being typed so; here a word that begins terms is taken as
   * typed: widening those too moved no judged query and cost several times
   * as much gateway CPU under first-sight traffic (docs/decisions/0009). A range holding more postings than a quarter of the
   * packs (and COMMON_RANGE_MIN) is left out: it is a common word's neighbourhood (`comfy` for
   * `comfyx`), which would make most packs candidates at a typo's rank and say nothing.
   */
  private typoNeighbours(tok: string, typos: number, widen: boolean): number[] {
    return (widen ? this.widenedTypoCache : this.fuzzyCache).getOrCompute(tok, () => {
      const { termStart, n } = this.data;
      const near: number[] = [];
      const onPrefix = widen
        ? (p: string, dist: number) => {
            const [a, b] = this.dict.prefixRange(p);
            if (termStart[b]! - termStart[a]! <= Math.max(COMMON_RANGE_MIN, n / 4)) near.push(a, b, dist);
          }
        : undefined;
      this.data.trie.fuzzy(tok, typos, (i, dist) => near.push(i, i + 1, dist), onPrefix);
      return near;
    });
  }

  /** The Porter stem of each dictionary term, computed when first needed (queries share their dictionary words). */
  private readonly termStems: (string | undefined)[] = [];

  /** The dictionary terms that share the token's stem: `removal` and `removing` for `remove`. */
  private stemNeighbours(tok: string, stem: string): number[] {
    return this.stemCache.getOrCompute(tok, () => {
      const terms = this.data.terms;
      const out: number[] = [];
      const [s, e] = this.dict.prefixRange(stem);
      // A stem shared by hundreds of terms is too short to say much.
      if (e - s > 512) return out;
      // Porter strips at most a few letters: longer terms cannot share the stem.
      const longest = stem.length + 5;
      const stems = this.termStems;
      for (let i = s; i < e; i++) {
        const term = terms[i]!;
        if (term.length > longest || term === tok) continue;
        const st = (stems[i] ??= stemmer(term));
        if (st === stem) out.push(i);
      }
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
    // Rows are written only where a slot matched: clear what the last search used, once.
    this.codes.fill(0, 0, this.codesUsed);
    this.plan = plan;
    const invTotal = (this.invTotal = 1 / plan.totalWeight);
    const { worth, worthClassLike, strength, strengthClassLike } = this.match;
    for (let t = 0; t < S; t++) {
      const slot = plan.slots[t]!;
      const table = slot.classLike ? worthClassLike : worth;
      this.slotWorth.set(table, t * 32);
      if (t < plan.words && plan.weights[t] === 1) this.slotStrength.set(slot.classLike ? strengthClassLike : strength, t * 32);
      else this.slotStrength.fill(0, t * 32, t * 32 + 32);
      // A word adds its weighted share and its strength; an extra slot's gain depends on the words it covers (addPostings).
      if (slot.word)
        for (let c = 0; c < 32; c++)
          this.slotGain[t * 32 + c] =
            Math.round(plan.weights[t]! * table[c]! * invTotal * SCORE_STEPS) + this.slotStrength[t * 32 + c]! * SCORE_SPACE;
    }
    let nc = 0;
    for (let slot = 0; slot < S; slot++) {
      const { term: tok, prefix, word } = plan.slots[slot]!;
      let s: number;
      let e: number;
      if (prefix) [s, e] = this.dict.prefixRange(tok);
      else {
        s = this.dict.exactIndex(tok);
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
      // A word of the dictionary keeps its stem from the last query that stemmed it (Porter's rules are regular expressions, dear to run per query).
      const stem =
        tok.length < 4 || NOISE_WORDS.has(tok) ? "" : s < e && terms[s] === tok ? (this.termStems[s] ??= stemmer(tok)) : stemmer(tok);
      // Inside the prefix range too: the same word's other form (`upscaler` for `upscale`) is a
      // whole word, stronger than a longer word that merely begins so (`impactframes`).
      if (stem.length >= 3) {
        for (const i of this.stemNeighbours(tok, stem))
          nc = this.addPostings(termStart[i]!, termStart[i + 1]!, KIND_STEM, gen, slot, S, nc);
      }
      const typos = allowedTypos(tok.length);
      if (typos > 0) {
        const near = this.typoNeighbours(tok, typos, prefix && s === e);
        for (let j = 0; j < near.length; j += 3) {
          const i = near[j]!;
          // A term in the range already counted at least as well (exact or prefix beats any typo).
          if (i >= s && i < e) continue;
          const kind = near[j + 2] === 0 ? KIND_EXACT : KIND_TYPO1 - 1 + near[j + 2]!;
          nc = this.addPostings(termStart[i]!, termStart[near[j + 1]!]!, kind, gen, slot, S, nc);
        }
      }
    }
    this.codesUsed = nc * S;
    return nc;
  }

  /**
   * Record the postings [from, end) for one slot: a doc seen for the first time this search
   * becomes a candidate (starting from its popularity), and where the slot's best match code for
   * it improves, its score moves by the difference (word slots: a table lookup; extra slots:
   * `extraGain`).
   */
  private addPostings(from: number, end: number, kind: number, gen: number, slot: number, S: number, nc: number): number {
    if (from >= end) return nc;
    // Make room for every doc of the run becoming a candidate (a doc is one candidate however many of its postings come), so the loop never checks.
    const need = Math.min(nc + end - from, this.data.n) * S;
    if (need > this.codes.length) {
      const grown = new Uint8Array(Math.max(this.codes.length * 2, need));
      grown.set(this.codes);
      this.codes = grown;
    }
    return slot < this.plan!.words
      ? this.addWordPostings(from, end, kind, gen, slot, S, nc)
      : this.addExtraPostings(from, end, kind, gen, slot, S, nc);
  }

  /** `addPostings` for a word's slot: its code and gain per tier are fixed for the run, so the loop calls nothing. */
  private addWordPostings(from: number, end: number, kind: number, gen: number, slot: number, S: number, nc: number): number {
    const { postDoc, postTier } = this.data;
    const { docStamp, candOf, cand, acc, popularitySteps, codes, runCode, runGain } = this;
    const gain = this.slotGain;
    const base = slot * 32;
    const { addsOnly, completionsAddOnly } = this.plan!.slots[slot]!;
    const create = !addsOnly && !(kind === KIND_PREFIX && completionsAddOnly);
    for (let t = 0; t < TIERS; t++) {
      runCode[t] = this.match.codeOf[(t << 3) | kind]!;
      runGain[t] = gain[base + runCode[t]!]!;
    }
    for (let p = from; p < end; p++) {
      const d = postDoc[p]!;
      const t = postTier[p]!;
      if (docStamp[d] !== gen) {
        if (!create) continue;
        // Most postings make a new candidate, whose row is still all zeros: its score is set, not moved.
        docStamp[d] = gen;
        const c = nc++;
        cand[c] = d;
        candOf[d] = c;
        codes[c * S + slot] = runCode[t]!;
        acc[c] = popularitySteps[d]! + runGain[t]!;
        continue;
      }
      const c = candOf[d]!;
      const at = c * S + slot;
      const m = runCode[t]!;
      const old = codes[at]!;
      if (m > old) {
        codes[at] = m;
        acc[c] = acc[c]! + runGain[t]! - gain[base + old]!;
      }
    }
    return nc;
  }

  /** `addPostings` for a joined run or an abbreviation: its gain depends on the words it covers (`extraGain`). */
  private addExtraPostings(from: number, end: number, kind: number, gen: number, slot: number, S: number, nc: number): number {
    const { postDoc, postTier } = this.data;
    const { docStamp, candOf, cand, acc, popularitySteps, codes } = this;
    const codeOf = this.match.codeOf;
    for (let p = from; p < end; p++) {
      const d = postDoc[p]!;
      const m = codeOf[(postTier[p]! << 3) | kind]!;
      if (docStamp[d] !== gen) {
        docStamp[d] = gen;
        const c = nc++;
        cand[c] = d;
        candOf[d] = c;
        acc[c] = popularitySteps[d]! + this.extraGain(c * S, slot, m) + this.strengthGain(c * S, slot, m, 0);
        codes[c * S + slot] = m;
        continue;
      }
      const c = candOf[d]!;
      const at = c * S + slot;
      const old = codes[at]!;
      if (m > old) {
        acc[c] = acc[c]! + this.extraGain(c * S, slot, m) - this.extraGain(c * S, slot, old) + this.strengthGain(c * S, slot, m, old);
        codes[at] = m;
      }
    }
    return nc;
  }

  /**
   * What an extra slot (joined neighbours, an abbreviation) matched with `code` adds for the
   * candidate whose codes row starts at `row`: a phrase bonus, and for each word it covers the
   * part of its worth that word's own match fell short of. Word slots come first in a plan, so
   * their codes are final when an extra slot is read.
   */
  private extraGain(row: number, slot: number, code: number): number {
    if (code === 0) return 0;
    const plan = this.plan!;
    const worth = this.slotWorth;
    const c = worth[slot * 32 + code]!;
    let text = 0;
    for (const t of plan.covers[slot - plan.words]!) {
      const own = worth[t * 32 + this.codes[row + t]!]!;
      if (c > own) text += plan.weights[t]! * (c - own);
    }
    return Math.round((text * this.invTotal + this.weights.phrase * c) * SCORE_STEPS);
  }

  /**
   * What an extra slot's code moving from `from` to `to` changes in the candidate's strength, in
   * units of SCORE_SPACE: each content word it covers is as strong as the best of its own match
   * and the extra slots covering it (two runs over one word do not count it twice).
   */
  private strengthGain(row: number, slot: number, to: number, from: number): number {
    const plan = this.plan!;
    const strength = this.slotStrength;
    const codes = this.codes;
    let gain = 0;
    for (const t of plan.covers[slot - plan.words]!) {
      const base = t * 32;
      const next = strength[base + to]!;
      if (next === 0) continue;
      let best = strength[base + codes[row + t]!]!;
      for (const e of plan.coveredBy[t]!) if (e !== slot) best = Math.max(best, strength[base + codes[row + e]!]!);
      const prev = strength[base + from]!;
      if (next > best) gain += next - Math.max(best, prev);
    }
    return gain * SCORE_SPACE;
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
