import { NODE_FIELDS, NODE_PUBLIC_ALIASES, type Node, type SearchPage } from "@app/contracts";
import type { StoredNode } from "./catalog-record.ts";
import { installVersion } from "./versions.ts";

const FIELDS = new Set<string>(NODE_FIELDS);
const cache = new WeakMap<StoredNode, Node>();
const jsonCache = new WeakMap<StoredNode, string>();

/**
 * A stored record as the API answers it: only Node fields (no `app_node_names` or `versions`,
 * nothing unknown), no nulls, beside each renamed field the public registry's name for it, and
 * `latest_version` the install-path version as the version routes answer it (see `installVersion`).
 * Records are immutable once indexed, so the answer is computed once per record.
 */
export function toApiNode(r: StoredNode): Node {
  const hit = cache.get(r);
  if (hit) return hit;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) {
    if (v === undefined || v === null || !FIELDS.has(k)) continue;
    out[k] = v;
  }
  for (const [ours, theirs] of Object.entries(NODE_PUBLIC_ALIASES)) {
    if (out[ours] !== undefined) out[theirs] = out[ours];
  }
  // The install-path version, as registry-backend's GetNode embeds it; none when no version is installable.
  const latest = installVersion(r);
  if (latest) out.latest_version = latest;
  else delete out.latest_version;
  const node = out as Node;
  cache.set(r, node);
  return node;
}

export function toPage(nodes: readonly StoredNode[], total: number, page: number, limit: number): SearchPage {
  return { nodes: nodes.map(toApiNode), page, limit, total, totalPages: Math.ceil(total / limit) };
}

/** A node's JSON text, serialised once per record: most of a page's cost is stringifying its nodes. */
export function toApiNodeJson(r: StoredNode): string {
  let json = jsonCache.get(r);
  if (json === undefined) {
    json = JSON.stringify(toApiNode(r));
    jsonCache.set(r, json);
  }
  return json;
}

/** The page as JSON text, byte for byte what `JSON.stringify(toPage(...))` gives. */
export function toPageJson(nodes: readonly StoredNode[], total: number, page: number, limit: number): string {
  const { nodes: _nodes, ...rest } = toPage([], total, page, limit);
  return `{"nodes":[${nodes.map(toApiNodeJson).join(",")}],${JSON.stringify(rest).slice(1)}`;
}

/** JSON text with its UTF-8 length, which the response's Content-Length needs. */
export interface JsonText {
  json: string;
  bytes: number;
}

const pageCache = new WeakMap<object, JsonText & { page: number; limit: number }>();

/**
 * The page of an engine result. An engine that hands the same result object to equal queries
 * (the embedded one memoises them) gets the same text back without building or measuring it
 * again; the text lives exactly as long as the result does.
 */
export function resultPage(result: { nodes: readonly StoredNode[]; total: number }, page: number, limit: number): JsonText {
  const hit = pageCache.get(result);
  if (hit && hit.page === page && hit.limit === limit) return hit;
  const json = toPageJson(result.nodes, result.total, page, limit);
  const entry = { page, limit, json, bytes: Buffer.byteLength(json) };
  pageCache.set(result, entry);
  return entry;
}
