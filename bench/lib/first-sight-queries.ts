import type { CatalogLine } from "./catalog.ts";
import { seeded } from "@app/testkit/catalog";

/**
 * The long tail of a registry's search traffic, where most query strings are typed once: a
 * deterministic, endless stream of distinct /nodes/search query strings made of the catalog's
 * own words. Single words, word pairs, words typed keystroke by keystroke (`c`, `co`, `con`, …
 * as a search box sends them), one-edit typos, node names and app node name fragments; about a
 * third carry a filter, a second or third page or a limit of 20. No string comes twice, so no
 * answer can come from a memo: this is what the search costs the first time it is asked.
 */
export function* firstSightQueries(rows: readonly CatalogLine[], seed = 7): Generator<string, never> {
  const rand = seeded(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  // Words drawn from the multiset, so common words come up as often as people type them.
  const words = rows
    .flatMap((r) => `${r.name ?? ""} ${r.description ?? ""}`.toLowerCase().split(/[^a-z0-9]+/))
    .filter((w) => w.length >= 3 && !/^\d+$/.test(w));
  const longWords = words.filter((w) => w.length >= 5);
  const names = rows.map((r) => r.name).filter((n): n is string => !!n);
  const appNodes = rows.flatMap((r) => r.app_node_names ?? []).filter((n) => n.length >= 4 && /^[\x20-\x7e]+$/.test(n)); // sliced by code unit
  const seen = new Set<string>();
  const enc = encodeURIComponent;

  const context = (): string => {
    if (rand() < 0.65) return "";
    let c = "";
    if (rand() < 0.3) c += "&limit=20";
    const p = rand();
    if (p < 0.2) c += "&page=2";
    else if (p < 0.3) c += "&page=3";
    const os = rand();
    if (os < 0.2) c += "&supported_os=Windows";
    else if (os < 0.3) c += "&supported_os=Linux";
    else if (os < 0.35) c += "&supported_os=macOS";
    if (rand() < 0.2) c += "&supported_accelerator=CUDA";
    return c;
  };
  const oneEdit = (w: string): string => {
    const i = 1 + Math.floor(rand() * (w.length - 1)); // never the first character (that costs two)
    const letter = String.fromCharCode(97 + Math.floor(rand() * 26));
    switch (Math.floor(rand() * 4)) {
      case 0:
        return w.slice(0, i) + letter + w.slice(i + 1); // substitution
      case 1:
        return w.slice(0, i) + w.slice(i + 1); // deletion
      case 2:
        return w.slice(0, i) + letter + w.slice(i); // insertion
      default:
        return i < w.length - 1 ? w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2) : w.slice(0, i) + letter; // swap
    }
  };

  for (;;) {
    const kind = rand();
    const ctx = context();
    let batch: string[];
    if (kind < 0.3) {
      // A search box: one request per keystroke, one-character prefix included.
      const w = pick(words);
      batch = [];
      for (let k = 1; k <= w.length; k++) batch.push(`search=${enc(w.slice(0, k))}${ctx}`);
    } else if (kind < 0.45) batch = [`search=${enc(pick(words))}${ctx}`];
    else if (kind < 0.65) {
      const second = pick(words);
      // Half the pairs are still being typed: the last word is a prefix.
      const last = rand() < 0.5 ? second.slice(0, 2 + Math.floor(rand() * (second.length - 1))) : second;
      batch = [`search=${enc(`${pick(words)} ${last}`)}${ctx}`];
    } else if (kind < 0.82) batch = [`search=${enc(oneEdit(pick(longWords)))}${ctx}`];
    else if (kind < 0.9) batch = [`search=${enc(pick(names))}${ctx}`];
    else if (kind < 0.97) {
      const name = pick(appNodes);
      const start = Math.floor(rand() * (name.length - 3));
      batch = [`app_node_search=${enc(name.slice(start, start + 3 + Math.floor(rand() * (name.length - start - 2))))}${ctx}`];
    } else {
      // Browsing without a search: the page and limit are this kind's own.
      batch = [`page=${1 + Math.floor(rand() * 600)}&limit=${rand() < 0.5 ? 10 : 20}${ctx.replace(/&(limit|page)=\d+/g, "")}`];
    }
    for (const q of batch) {
      if (seen.has(q)) continue;
      seen.add(q);
      yield q;
    }
  }
}
