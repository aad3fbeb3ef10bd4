import type { Settings } from "meilisearch";
import { ABBREVIATIONS } from "../../domain/synonyms.ts";

/** Filler words of running English: Meilisearch drops them from queries. The ecosystem's own filler (comfyui, nodes, pack, ...) stays searchable, so it is not here. */
export const MEILI_STOP_WORDS = ["the", "a", "an", "and", "of", "to", "in", "with", "on", "by", "for"];

/** One-way synonyms: the words people type for a need also search the abbreviation packs are named by (domain/synonyms.ts). */
export function meiliSynonyms(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [term, phrases] of Object.entries(ABBREVIATIONS)) for (const p of phrases) (out[p] ??= []).push(term);
  return out;
}

/**
 * Index settings that make Meilisearch rank as the embedded engine does, as far as it can:
 * attributes in the order of meaning, the same typo thresholds (Meilisearch also counts a typo
 * on the first character as two), phrase (proximity) above scattered words, a whole word before
 * a part of a longer one (`exactness`), then popularity (`popularity:desc`) settling matches
 * equal in all of those (domain/ranking.ts, `matchStrength`), and popularity order (`rank`) as
 * the last rule. The exact id/name rule and
 * the whole-over-partial app node rule are done by the adapter (segments).
 */
export const MEILI_SETTINGS: Settings = {
  searchableAttributes: ["identity_text", "nodes_tags_text", "description_text", "author_text"],
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
  rankingRules: ["words", "typo", "proximity", "attribute", "exactness", "popularity:desc", "sort", "rank:asc"],
  typoTolerance: { enabled: true, minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 }, disableOnAttributes: [], disableOnWords: [] },
  // Platform synonyms are resolved by the adapter on both sides (documents.ts / query.ts):
  // Meilisearch synonyms apply to query words, not to filter values. These are the abbreviations.
  synonyms: meiliSynonyms(),
  stopWords: MEILI_STOP_WORDS,
  // Our tokeniser already split on every separator; keep Meilisearch from re-joining anything.
  separatorTokens: [],
  pagination: { maxTotalHits: 10_000_000 },
  proximityPrecision: "byAttribute",
};
