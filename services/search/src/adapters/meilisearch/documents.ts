import type { StoredNode } from "../../domain/catalog-record.ts";
import { OS_INDEPENDENT, platformLevels } from "../../domain/platform-values.ts";
import {
  appNodeNameTokens,
  hyphenatedWords,
  identityKey,
  joinedRuns,
  nameParts,
  namePartsIndexed,
  normaliseRepositoryUrl,
  repositoryName,
  tokenise,
} from "../../domain/text.ts";
import { classNamesOf } from "../../domain/class-providers.ts";
import { stemmer } from "stemmer";

/**
 * One Meilisearch document per node. Searchable text is split into four attributes in the
 * order of meaning (identity, node classes and tags, description, author), carrying the same
 * words as the embedded index (names split by case and digits, joined runs, hyphenated words);
 * everything the filters need is precomputed here, in the same normal forms.
 */
export interface MeiliDocument {
  uid: string;
  /** Popularity order (0 = most popular), the last tie-break. */
  rank: number;
  /** Popularity from 0 to 1 (domain/popularity.ts), the custom ranking rule `popularity:desc`. */
  popularity: number;
  banned: boolean;
  identity_text: string;
  nodes_tags_text: string;
  description_text: string;
  author_text: string;
  /** identityKey of id, name and repository name: the "exact match" rule. */
  identity: string[];
  app_names_lower: string[];
  /** The id lower-cased: an id in other capitals finds its pack (the registry's 302). */
  id_lower: string;
  /**
   * Exact keys (see `exactKey`) of the id, of the app node names and preempted names (the packs
   * of a node class), and of the publisher id.
   */
  id_key: string;
  class_keys: string[];
  publisher_key: string;
  repo_norm: string;
  os_any: boolean;
  /** Every level-prefix of every value, and the full values, for the ` :: ` path rule. */
  os_prefixes: string[];
  os_values: string[];
  acc_any: boolean;
  acc_prefixes: string[];
  acc_values: string[];
  record: StoredNode;
}

/**
 * A value for a filter that must match exactly: Meilisearch compares filter strings without
 * regard to case, so case-sensitive values (ids, class names) are compared as lower-case hex.
 */
export function exactKey(value: string): string {
  return Buffer.from(value, "utf8").toString("hex");
}

/** Meilisearch ids allow only [A-Za-z0-9_-]: node ids are carried as base64url. */
export function meiliUid(id: string): string {
  return Buffer.from(id, "utf8").toString("base64url") || "_";
}

function paths(values: string[] | undefined, kind: "os" | "accelerator") {
  const list = values ?? [];
  const levels = list.map(platformLevels).filter((l) => l.length > 0);
  const any = levels.length === 0 || (kind === "os" && levels.some((l) => l.join(" :: ") === OS_INDEPENDENT));
  const prefixes = new Set<string>();
  for (const l of levels) for (let i = 1; i <= l.length; i++) prefixes.add(l.slice(0, i).join(" :: "));
  return { any, prefixes: [...prefixes], values: [...new Set(levels.map((l) => l.join(" :: ")))] };
}

function identityText(r: StoredNode, sameStem: ReadonlyMap<string, readonly string[]> | undefined): string {
  const words = identityWords(r);
  if (!sameStem) return words.join(" ");
  const all = new Set(words);
  for (const w of words) for (const o of sameStem.get(w) ?? []) all.add(o);
  return [...all].join(" ");
}

/** The words of the identity attribute: id, name and repository name, as typed and split, and the name's joined runs. */
export function identityWords(r: StoredNode): string[] {
  const repo = r.repository
    ? r.repository
        .replace(/(\.git)?\/*$/, "")
        .split("/")
        .pop()
    : undefined;
  const words = new Set<string>();
  for (const s of [r.id, r.name, repo]) {
    if (!s) continue;
    for (const t of tokenise(s)) words.add(t);
    for (const t of namePartsIndexed(s)) words.add(t);
  }
  if (r.name) for (const t of joinedRuns(nameParts(r.name))) words.add(t);
  return [...words];
}

/**
 * Meilisearch does not stem, and ranks a whole word before a part of a longer one ahead of
 * popularity. The embedded engine counts the same word's other form as whole (`upscaler` for
 * `upscale`, domain/ranking.ts). So a pack's identity words also carry the catalog's other
 * identity words of their Porter stem: by word, those siblings. Words under 4 letters are not
 * stemmed (as in the embedded engine), nor stems shared by more than 16 words.
 */
export function sameStemIdentityWords(records: readonly StoredNode[]): ReadonlyMap<string, readonly string[]> {
  const byStem = new Map<string, Set<string>>();
  for (const r of records) {
    for (const w of identityWords(r)) {
      if (w.length < 4) continue;
      const stem = stemmer(w);
      if (stem.length < 3) continue;
      let words = byStem.get(stem);
      if (!words) byStem.set(stem, (words = new Set()));
      words.add(w);
    }
  }
  const out = new Map<string, string[]>();
  for (const words of byStem.values()) {
    if (words.size < 2 || words.size > 16) continue;
    for (const w of words)
      out.set(
        w,
        [...words].filter((o) => o !== w),
      );
  }
  return out;
}

export function toMeiliDocument(
  r: StoredNode,
  rank: number,
  popularity = 0,
  sameStem?: ReadonlyMap<string, readonly string[]>,
): MeiliDocument {
  const repoName = r.repository ? repositoryName(r.repository) : undefined;
  const os = paths(r.supported_os, "os");
  const acc = paths(r.supported_accelerators, "accelerator");
  const appTokens = (r.app_node_names ?? []).flatMap(appNodeNameTokens);
  return {
    uid: meiliUid(r.id),
    rank,
    popularity,
    banned: r.status === "NodeStatusBanned",
    identity_text: identityText(r, sameStem),
    nodes_tags_text: [...appTokens, ...(r.tags ?? []).flatMap(tokenise)].join(" "),
    description_text: r.description ? [...tokenise(r.description), ...hyphenatedWords(r.description)].join(" ") : "",
    author_text: [r.author, r.publisher?.id, r.publisher?.name]
      .filter(Boolean)
      .map((s) => tokenise(s!).join(" "))
      .join(" "),
    identity: [
      ...new Set(
        [r.id, r.name, repoName]
          .filter((s): s is string => !!s)
          .map(identityKey)
          .filter(Boolean),
      ),
    ],
    app_names_lower: [...new Set((r.app_node_names ?? []).map((n) => n.toLowerCase()))],
    id_lower: r.id.toLowerCase(),
    id_key: exactKey(r.id),
    class_keys: [...classNamesOf(r)].map(exactKey),
    publisher_key: r.publisher?.id ? exactKey(r.publisher.id) : "",
    repo_norm: r.repository ? normaliseRepositoryUrl(r.repository) : "",
    os_any: os.any,
    os_prefixes: os.prefixes,
    os_values: os.values,
    acc_any: acc.any,
    acc_prefixes: acc.prefixes,
    acc_values: acc.values,
    record: r,
  };
}
