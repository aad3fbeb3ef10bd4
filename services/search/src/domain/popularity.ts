import type { StoredNode } from "./catalog-record.ts";

/**
 * Popularity as a number from 0 to 1 for ranking, from a catalog sorted by popularity
 * (search_ranking, downloads, repo_stars, all descending: `byPopularity`). Both engines use the
 * same figures (Meilisearch: the `popularity` document field).
 */
const num = (v: number | undefined) => (v === undefined ? -Infinity : v);

const samePopularity = (a: StoredNode, b: StoredNode) =>
  num(a.search_ranking) === num(b.search_ranking) && num(a.downloads) === num(b.downloads) && num(a.repo_stars) === num(b.repo_stars);

/** Docs are in popularity order: a doc's percentile is the share of the other docs strictly less popular. */
export function popularityPercentiles(docs: readonly StoredNode[]): Float32Array {
  const n = docs.length;
  const out = new Float32Array(n);
  let groupEnd = n;
  for (let d = n - 1; d >= 0; d--) {
    if (d < n - 1 && !samePopularity(docs[d]!, docs[d + 1]!)) groupEnd = d + 1;
    out[d] = n <= 1 ? 1 : (n - groupEnd) / (n - 1);
  }
  return out;
}

/**
 * The log-scaled count of what the catalog measures popularity by, in the order of
 * byPopularity: search_ranking where most packs carry one, else downloads (the registry),
 * else GitHub stars (ComfyUI-Manager's list has neither).
 */
export function popularityLogScale(docs: readonly StoredNode[]): Float32Array {
  const n = docs.length;
  const most = (get: (r: StoredNode) => number | undefined) => docs.reduce((k, r) => k + (get(r) !== undefined ? 1 : 0), 0) * 2 >= n;
  const count = most((r) => r.search_ranking) ? (r: StoredNode) => r.search_ranking : most((r) => r.downloads) ? (r: StoredNode) => r.downloads : (r: StoredNode) => r.repo_stars;
  let max = 0;
  for (const r of docs) max = Math.max(max, count(r) ?? 0);
  const out = new Float32Array(n);
  if (max <= 0) return out;
  const scale = Math.log1p(max);
  for (let d = 0; d < n; d++) out[d] = Math.log1p(Math.max(0, count(docs[d]!) ?? 0)) / scale;
  return out;
}

/** The blend the ranking uses: `percentileShare` of the percentile, the rest the log-scaled count. */
export function blendedPopularity(docs: readonly StoredNode[], percentileShare: number): Float32Array {
  const pct = popularityPercentiles(docs);
  const log = popularityLogScale(docs);
  const out = new Float32Array(docs.length);
  for (let d = 0; d < docs.length; d++) out[d] = percentileShare * pct[d]! + (1 - percentileShare) * log[d]!;
  return out;
}
