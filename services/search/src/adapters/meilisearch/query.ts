import type { EngineQuery } from "../../ports/search-engine.ts";
import { platformLevels } from "../../domain/platform-values.ts";
import { identityKey, normaliseRepositoryUrl, tokenise } from "../../domain/text.ts";
import { MAX_QUERY_TOKENS } from "../embedded/search-index.ts";
import { exactKey } from "./documents.ts";

/** A value inside a Meilisearch filter string: double-quoted, with `\` and `"` escaped. */
export function quote(v: string): string {
  return `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

function platformFilter(filter: string, prefix: "os" | "acc"): string | undefined {
  const levels = platformLevels(filter);
  if (levels.length === 0) return undefined;
  const f = levels.join(" :: ");
  const ancestors = levels.map((_, i) => levels.slice(0, i + 1).join(" :: "));
  // Passes when the list is open, or F is a level-prefix of a value, or a value is a level-prefix of F.
  return `(${prefix}_any = true OR ${prefix}_prefixes = ${quote(f)} OR ${prefix}_values IN [${ancestors.map(quote).join(", ")}])`;
}

/** The list's `node_id`, on the ids' exact keys. */
export function idsFilter(ids: readonly string[]): string {
  return `id_key IN [${ids.map((id) => quote(exactKey(id))).join(", ")}]`;
}

/** The registry read routes' lookups, as filters over the document fields made for them. */
export const lookupFilters = {
  lowerId: (id: string): string[] => [`id_lower = ${quote(id.toLowerCase())}`],
  providersOf: (name: string): string[] => [`class_keys = ${quote(exactKey(name))}`, "banned = false"],
  publishedBy: (publisherId: string, includeBanned: boolean): string[] => [
    `publisher_key = ${quote(exactKey(publisherId))}`,
    ...(includeBanned ? [] : ["banned = false"]),
  ],
};

export interface MeiliPlan {
  q: string;
  /** Filters applied to every segment. */
  base: string[];
  /** Result segments in rank order (whole app-node matches, then exact id/name matches, ...). */
  segments: string[][];
  sort?: string[];
  /** The query can match nothing (a search made only of separators). */
  empty: boolean;
}

/** Translate an engine query into Meilisearch filters, segments and sort. Pure. */
export function planMeiliQuery(q: EngineQuery): MeiliPlan {
  const base: string[] = [];
  if (!q.includeBanned) base.push("banned = false");
  if (q.ids !== undefined) base.push(idsFilter(q.ids));
  if (q.os !== undefined) {
    const f = platformFilter(q.os, "os");
    if (f) base.push(f);
  }
  if (q.accelerator !== undefined) {
    const f = platformFilter(q.accelerator, "acc");
    if (f) base.push(f);
  }
  let empty = false;
  if (q.repositoryUrl !== undefined) {
    const needle = normaliseRepositoryUrl(q.repositoryUrl);
    if (!needle) empty = true;
    else base.push(`repo_norm CONTAINS ${quote(needle)}`);
  }
  let appSegments: string[][] = [[]];
  if (q.appNode !== undefined) {
    const needle = q.appNode.toLowerCase();
    if (!needle) empty = true;
    appSegments = [
      [`app_names_lower = ${quote(needle)}`],
      [`app_names_lower CONTAINS ${quote(needle)}`, `NOT app_names_lower = ${quote(needle)}`],
    ];
  }
  let text = "";
  let exactSegments: string[][] = [[]];
  if (q.search !== undefined) {
    const tokens = [...new Set(tokenise(q.search))].slice(0, MAX_QUERY_TOKENS);
    if (tokens.length === 0) empty = true;
    text = tokens.join(" ");
    const key = identityKey(q.search);
    if (key) exactSegments = [[`identity = ${quote(key)}`], [`NOT identity = ${quote(key)}`]];
  }
  const segments: string[][] = [];
  for (const a of appSegments) for (const e of exactSegments) segments.push([...a, ...e]);
  return { q: text, base, segments, sort: text ? undefined : ["rank:asc"], empty };
}

/** Which part of each segment a page [offset, offset+limit) needs, given the segments' totals. */
export function sliceSegments(totals: number[], offset: number, limit: number): { segment: number; offset: number; limit: number }[] {
  const out: { segment: number; offset: number; limit: number }[] = [];
  let start = offset;
  let left = limit;
  for (let s = 0; s < totals.length && left > 0; s++) {
    const t = totals[s]!;
    if (start >= t) {
      start -= t;
      continue;
    }
    const take = Math.min(left, t - start);
    out.push({ segment: s, offset: start, limit: take });
    left -= take;
    start = 0;
  }
  return out;
}
