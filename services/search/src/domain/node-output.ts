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
  return `{"nodes":[${nodes.map(toApiNodeJson).join(",")}${pageTail(total, page, limit)}`;
}

/** What follows the page's nodes: `],"page":…}`. */
function pageTail(total: number, page: number, limit: number): string {
  const { nodes: _nodes, ...rest } = toPage([], total, page, limit);
  return `],${JSON.stringify(rest).slice(1)}`;
}

const bytesCache = new WeakMap<StoredNode, Buffer>();

/** A node's JSON as UTF-8, encoded once per record. */
function toApiNodeBytes(r: StoredNode): Buffer {
  let bytes = bytesCache.get(r);
  if (bytes === undefined) {
    bytes = Buffer.from(toApiNodeJson(r));
    bytesCache.set(r, bytes);
  }
  return bytes;
}

const PAGE_HEAD = Buffer.from('{"nodes":[');
const COMMA = Buffer.from(",");

/**
 * The page as UTF-8, the bytes of `toPageJson`: its nodes' bytes are encoded once per record,
 * so a page is one copy of them. As a string, every page was joined, flattened, measured twice
 * (here for Content-Length, and again by Node's write) and encoded to UTF-8 on the way out.
 */
export function toPageBytes(nodes: readonly StoredNode[], total: number, page: number, limit: number): Buffer {
  const parts: Buffer[] = [PAGE_HEAD];
  for (let i = 0; i < nodes.length; i++) {
    if (i > 0) parts.push(COMMA);
    parts.push(toApiNodeBytes(nodes[i]!));
  }
  parts.push(Buffer.from(pageTail(total, page, limit)));
  return Buffer.concat(parts);
}

/** JSON with its length in bytes, which the response's Content-Length needs: as text, or already as UTF-8. */
export interface JsonText {
  json: string | Buffer;
  bytes: number;
}

const pageCache = new WeakMap<object, JsonText & { page: number; limit: number }>();

/**
 * The page of an engine result. An engine that hands the same result object to equal queries
 * (the embedded one memoises them) gets the same bytes back without building them again; they
 * live exactly as long as the result does.
 */
export function resultPage(result: { nodes: readonly StoredNode[]; total: number }, page: number, limit: number): JsonText {
  const hit = pageCache.get(result);
  if (hit && hit.page === page && hit.limit === limit) return hit;
  const json = toPageBytes(result.nodes, result.total, page, limit);
  const entry = { page, limit, json, bytes: json.length };
  pageCache.set(result, entry);
  return entry;
}
