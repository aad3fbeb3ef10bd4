/**
 * The relevance model both engines follow (the embedded engine exactly, Meilisearch as far as
 * its rules go). The weights were tuned on the judged query set (`pnpm bench relevance`,
 * `bench/relevance-tune.ts`), not by hand on single queries; see the README's "Ranking".
 */

/** Where a query word was found, best first. */
export const TIER_IDENTITY = 0; // id, name, repository name
export const TIER_CLASSES = 1; // node class names and tags
export const TIER_DESCRIPTION = 2;
export const TIER_AUTHOR = 3; // author, publisher id and name

/** How a word matched. */
export const KIND_EXACT = 0;
export const KIND_PREFIX = 1; // the last word, typed so far
export const KIND_STEM = 2; // the same stem (`removal` for `remove`)
export const KIND_TYPO1 = 3;
export const KIND_TYPO2 = 4;

/**
 * How strongly a word matched, ranked before the score: popularity orders matches of similar
 * strength but never lifts a weaker one above a stronger. Found nowhere 0; in node classes,
 * tags, description or author 2; in the id, name or repository name as a part of a longer word
 * (`impact` in `impactframes`) or with a typo 3; there as a whole word or the same word's other
 * form (`upscale`, `upscaler`) 4. A pack's strength is the sum over the query's words, filler
 * words aside; missing a word (0) costs at least as much as the best other word can gain (+2).
 */
export const STRENGTH_ELSEWHERE = 2;
export const STRENGTH_IDENTITY_PART = 3;
export const STRENGTH_IDENTITY_WORD = 4;

/** The strength of a match in `tier` of `kind` (a word typed like a class name counts node classes as its identity). */
export function matchStrength(tier: number, kind: number, classLike = false): number {
  if (tier !== TIER_IDENTITY && !(classLike && tier === TIER_CLASSES)) return STRENGTH_ELSEWHERE;
  return kind === KIND_EXACT || kind === KIND_STEM ? STRENGTH_IDENTITY_WORD : STRENGTH_IDENTITY_PART;
}

export interface RankingWeights {
  /** How well a field answers a word, by tier (identity first). */
  field: readonly [number, number, number, number];
  /** How well a match kind answers a word, by kind (exact first). */
  kind: readonly [number, number, number, number, number];
  /** A filler word's share of a query, against 1 for any other word. */
  noise: number;
  /** Added per neighbouring query words found together as one joined word (times that match's worth). */
  phrase: number;
  /**
   * Popularity's reach: a pack's popularity (0–1) times this is added to its text score (0–1
   * plus phrase bonuses). Bounded, so it settles about-equal matches, while a word missing
   * from a two-word query (0.5) outweighs most of it.
   */
  popularity: number;
  /** Popularity as a blend: this share its percentile in the catalog, the rest its log-scaled count. */
  percentileShare: number;
}

/** Chosen by `bench/relevance-tune.ts` on the judged set (real catalog), from a hand-set start of field [1, 0.7, 0.5, 0.35], phrase 0.15, popularity 0.45, percentile share 0.5. */
export const DEFAULT_WEIGHTS: RankingWeights = {
  field: [1, 0.6, 0.5, 0.4],
  kind: [1, 0.9, 0.9, 0.7, 0.5],
  noise: 0.15,
  phrase: 0.05,
  popularity: 0.49,
  percentileShare: 0.25,
};
