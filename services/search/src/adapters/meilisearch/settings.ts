import type { Settings } from "meilisearch";

/**
 * Index settings that make Meilisearch rank as the embedded engine does, as far as it can:
 * attributes in relevance order, the same typo thresholds (Meilisearch also counts a typo on
 * the first character as two), and popularity order (`rank`) as the last rule. The exact
 * id/name rule and the whole-over-partial app node rule are done by the adapter (segments).
 */
export const MEILI_SETTINGS: Settings = {
  searchableAttributes: ["identity_text", "nodes_tags_text", "other_text"],
  displayedAttributes: ["record"],
  filterableAttributes: [
    "banned",
    "id_lower",
    "id_key",
    "class_keys",
    "publisher_key",
    "identity",
    "app_names_lower",
    "repo_norm",
    "os_any",
    "os_prefixes",
    "os_values",
    "acc_any",
    "acc_prefixes",
    "acc_values",
  ],
  sortableAttributes: ["rank"],
  rankingRules: ["words", "attribute", "typo", "exactness", "sort", "rank:asc"],
  typoTolerance: { enabled: true, minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 }, disableOnAttributes: [], disableOnWords: [] },
  // Platform synonyms are resolved by the adapter on both sides (documents.ts / query.ts):
  // Meilisearch synonyms apply to query words, not to filter values.
  synonyms: {},
  stopWords: [],
  // Our tokeniser already split on every separator; keep Meilisearch from re-joining anything.
  separatorTokens: [],
  pagination: { maxTotalHits: 10_000_000 },
  proximityPrecision: "byAttribute",
};
