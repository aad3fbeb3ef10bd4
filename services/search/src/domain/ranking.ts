/**
 * The relevance model both engines follow (the embedded engine exactly, Meilisearch as far as
 * its rules go). Weights were tuned on the judged query set (`pnpm bench relevance`), not by
 * hand on single queries; see the README's "Ranking".
 */

/** Where a query word was found, best first. */
export const TIER_IDENTITY = 0; // id, name, repository name
export const TIER_CLASSES = 1; // node class names and tags
export const TIER_DESCRIPTION = 2;
export const TIER_AUTHOR = 3; // author, publisher id and name

/** How well a field answers a word, by tier. */
export const FIELD_WEIGHT = [1, 0.7, 0.5, 0.35] as const;

/** How a word matched. */
export const KIND_EXACT = 0;
export const KIND_PREFIX = 1; // the last word, typed so far
export const KIND_STEM = 2; // the same stem (`removal` for `remove`)
export const KIND_TYPO1 = 3;
export const KIND_TYPO2 = 4;
export const KIND_WEIGHT = [1, 0.9, 0.9, 0.7, 0.5] as const;

/** A filler word's share of a query, against 1 for any other word. */
export const NOISE_WEIGHT = 0.15;

/** Added for each pair of neighbouring query words found together as one joined name word. */
export const PHRASE_BONUS = 0.15;

/**
 * Popularity's reach: a pack's popularity percentile (0 = least, 1 = most popular) times this
 * is added to its text score (0–1 plus phrase bonuses). Bounded, so it settles near-equal
 * matches, while a word missing from a two-word query (0.5) outweighs it.
 */
export const POPULARITY_WEIGHT = 0.45;
