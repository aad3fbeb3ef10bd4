import { SEARCH_LIMIT_MAX, SEARCH_TEXT_MAX, type SearchQuery } from "@app/contracts";

/**
 * `SearchQueryParams.parse(raw)` for the query strings clients send every time (each known
 * parameter once, every value valid), without zod: zod's run of the schema is 4–16 µs of a
 * first-sight request, this 0.3. Anything else (a repeated or unknown key, `node_id`, `sort`, a
 * value zod would refuse) gives undefined and goes through zod, so its output and every error
 * message come from the schema alone. test/query-fast.test.ts holds the two to the same output,
 * keys and their order included.
 */
export function fastSearchQuery(raw: Record<string, unknown>): SearchQuery | undefined {
  let page = 1;
  let limit: number | undefined;
  let search: string | undefined | null = null; // null: the key is absent (zod leaves it out); undefined: blank
  let repositoryUrl: string | undefined | null = null;
  let appNode: string | undefined | null = null;
  let os: string | undefined | null = null;
  let accelerator: string | undefined | null = null;
  let includeBanned = false;
  for (const key in raw) {
    const v = raw[key];
    if (typeof v !== "string") return undefined;
    switch (key) {
      case "page": {
        const n = integer(v);
        if (n < 1) return undefined;
        page = n;
        break;
      }
      case "limit": {
        const n = integer(v);
        if (n < 1 || n > SEARCH_LIMIT_MAX) return undefined;
        limit = n;
        break;
      }
      case "search":
        if ((search = text(v)) === null) return undefined;
        break;
      case "repository_url_search":
        if ((repositoryUrl = text(v)) === null) return undefined;
        break;
      case "app_node_search":
        if ((appNode = text(v)) === null) return undefined;
        break;
      case "supported_os":
        if ((os = text(v)) === null) return undefined;
        break;
      case "supported_accelerator":
        if ((accelerator = text(v)) === null) return undefined;
        break;
      case "include_banned":
        if (v === "true") includeBanned = true;
        else if (v !== "false") return undefined;
        break;
      // Validated, then unused (see SearchQueryFields).
      case "latest":
        if (v !== "true" && v !== "false") return undefined;
        break;
      case "comfyui_version":
      case "form_factor":
        if (v.length > SEARCH_TEXT_MAX) return undefined;
        break;
      default:
        return undefined;
    }
  }
  // zod's object output: its keys in the schema's order, one left out only when absent from the input.
  const q: Record<string, unknown> = { page };
  if (limit !== undefined) q.limit = limit;
  if (search !== null) q.search = search;
  if (repositoryUrl !== null) q.repository_url_search = repositoryUrl;
  if (appNode !== null) q.app_node_search = appNode;
  if (os !== null) q.supported_os = os;
  if (accelerator !== null) q.supported_accelerator = accelerator;
  q.include_banned = includeBanned;
  if (limit === undefined) q.limit = 10;
  return q as SearchQuery;
}

/** `^\d{1,9}$` as a number, else -1. */
function integer(v: string): number {
  const len = v.length;
  if (len === 0 || len > 9) return -1;
  let n = 0;
  for (let i = 0; i < len; i++) {
    const d = v.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** A text parameter's value (undefined when blank), or null when zod would refuse it. */
function text(v: string): string | undefined | null {
  if (v.length > SEARCH_TEXT_MAX) return null;
  const trimmed = v.trim();
  return trimmed === "" ? undefined : trimmed;
}
