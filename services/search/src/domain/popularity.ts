import type { StoredNode } from "./catalog-record.ts";

/**
 * Popularity for ranking: the catalog's order (`popularityOrder`, both engines' doc order) and
 * a number from 0 to 1 per pack of a catalog in that order. Both engines use the same figures
 * (Meilisearch: the `popularity` document field).
 */
const num = (v: number | undefined) => (v === undefined ? -Infinity : v);

/**
 * The records' positions in popularity order: search_ranking, downloads, repo_stars (all
 * descending), then id. The keys are read once into typed arrays and the sort compares those,
 * not three fields of two records scattered over the heap (a cache miss per comparison at 1M
 * packs).
 */
export function popularityOrder(records: readonly StoredNode[]): Int32Array {
  const n = records.length;
  const ranking = new Float64Array(n);
  const downloads = new Float64Array(n);
  const stars = new Float64Array(n);
  const ids = new Array<string>(n);
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    ranking[i] = num(r.search_ranking);
    downloads[i] = num(r.downloads);
    stars[i] = num(r.repo_stars);
    ids[i] = r.id;
    order[i] = i;
  }
  order.sort(
    (a, b) =>
      ranking[b]! - ranking[a]! ||
      downloads[b]! - downloads[a]! ||
      stars[b]! - stars[a]! ||
      (ids[a]! < ids[b]! ? -1 : ids[a]! > ids[b]! ? 1 : 0) ||
      0,
  );
  return Int32Array.from(order);
}

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
 * popularityOrder: search_ranking where most packs carry one, else downloads (the registry),
 * else GitHub stars (ComfyUI-Manager's list has neither).
 */
export function popularityLogScale(docs: readonly StoredNode[]): Float32Array {
  const n = docs.length;
  const most = (get: (r: StoredNode) => number | undefined) => docs.reduce((k, r) => k + (get(r) !== undefined ? 1 : 0), 0) * 2 >= n;
  const count = most((r) => r.search_ranking)
    ? (r: StoredNode) => r.search_ranking
    : most((r) => r.downloads)
      ? (r: StoredNode) => r.downloads
      : (r: StoredNode) => r.repo_stars;
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
