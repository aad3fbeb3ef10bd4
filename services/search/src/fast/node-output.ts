import { NODE_FIELDS, NODE_PUBLIC_ALIASES, type Node, type SearchPage } from "@app/contracts";
import type { StoredNode } from "../domain/catalog-record.ts";
import { installVersion } from "../domain/versions.ts";

const FIELDS = new Set<string>(NODE_FIELDS);
const cache = new WeakMap<StoredNode, Node>();
const jsonCache = new WeakMap<StoredNode, JsonText>();

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
  return nodeText(r).json;
}

/** With its UTF-8 length, so that a page's length is a sum rather than a scan of the page. */
export function nodeText(r: StoredNode): JsonText {
  let text = jsonCache.get(r);
  if (text === undefined) {
    const json = JSON.stringify(toApiNode(r));
    text = { json, bytes: Buffer.byteLength(json) };
    jsonCache.set(r, text);
  }
  return text;
}

/** The page as JSON text, byte for byte what `JSON.stringify(toPage(...))` gives. */
export function toPageJson(nodes: readonly StoredNode[], total: number, page: number, limit: number): string {
  return pageText(nodes.map(nodeText), total, page, limit).json;
}

/**
 * Built by concatenation, which V8 keeps as a rope that the socket write flattens once: a joined
 * array and `Buffer.byteLength` over the page each copied or scanned the whole text again.
 * The numbers are integers, which JSON writes as `String` does.
 */
function pageText(nodes: readonly JsonText[], total: number, page: number, limit: number): JsonText {
  let json = '{"nodes":[';
  let bytes = 0;
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]!;
    json += i === 0 ? node.json : `,${node.json}`;
    bytes += node.bytes;
  }
  const tail = `],"page":${page},"limit":${limit},"total":${total},"totalPages":${Math.ceil(total / limit)}}`;
  json += tail;
  return { json, bytes: bytes + Math.max(0, nodes.length - 1) + 10 + tail.length };
}

/** JSON text with its UTF-8 length, which the response's Content-Length needs. */
export interface JsonText {
  json: string;
  bytes: number;
}

/** A page's text, with the page and limit it was built for. */
export interface PageText extends JsonText {
  page: number;
  limit: number;
}

/**
 * The page of an engine result. An engine that hands the same result object to equal queries
 * (the embedded one memoises them) gets the same text back without building or measuring it
 * again: the text is kept on the result, in its one field for it, and lives exactly as long as
 * the result does. (A weak map keyed by result did the same; under first-sight traffic, where
 * nearly every result is new, its entries doubled the young collector's time, and each lookup
 * missed the cache.)
 */
export function resultPage(
  result: { nodes: readonly StoredNode[]; total: number; texts?: readonly JsonText[]; pageText?: PageText },
  page: number,
  limit: number,
): PageText {
  const hit = result.pageText;
  if (hit && hit.page === page && hit.limit === limit) return hit;
  const entry = { page, limit, ...pageText(result.texts ?? result.nodes.map(nodeText), result.total, page, limit) };
  result.pageText = entry;
  return entry;
}
