import type { z } from "zod";
import { SearchQueryFields, SearchQueryParams, type SearchQuery } from "@app/contracts";
import type { EngineQuery } from "./engine-query.ts";
import { fastSearchQuery } from "../fast/query-fast.ts";

export type QueryParseResult = { ok: true; query: SearchQuery } | { ok: false; message: string };

/**
 * Parse a raw query object (as Express hands it over: strings, arrays for repeated keys,
 * objects for `a[b]=c`). `comfy_node_search` is the public registry's name for
 * `app_node_search`; both may be given only when they agree.
 */
export function parseSearchQuery(raw: Record<string, unknown>): QueryParseResult {
  let input = raw;
  const alias = raw.comfy_node_search;
  if (alias !== undefined) {
    if (typeof alias !== "string") return { ok: false, message: "comfy_node_search must be given once, as a single value" };
    const own = raw.app_node_search;
    if (own !== undefined && (typeof own !== "string" || own.trim() !== alias.trim())) {
      return { ok: false, message: "comfy_node_search and app_node_search are two names for one parameter and differ: give one of them" };
    }
    input = { ...raw, app_node_search: own ?? alias };
  }
  const fast = fastSearchQuery(input);
  if (fast) return { ok: true, query: fast };
  const parsed = SearchQueryParams.safeParse(input);
  if (!parsed.success) return { ok: false, message: parsed.error.issues.map((i) => i.message).join("; ") };
  return { ok: true, query: parsed.data };
}

export function toEngineQuery(q: SearchQuery): EngineQuery {
  return {
    search: q.search,
    repositoryUrl: q.repository_url_search,
    appNode: q.app_node_search,
    os: q.supported_os,
    accelerator: q.supported_accelerator,
    includeBanned: q.include_banned,
    ids: q.node_id,
    offset: (q.page - 1) * q.limit,
    limit: q.limit,
  };
}

/** Only `include_banned` matters for GET /nodes/:id. */
export function parseIncludeBanned(raw: Record<string, unknown>): { ok: true; includeBanned: boolean } | { ok: false; message: string } {
  const parsed = SearchQueryFields.pick({ include_banned: true }).safeParse({ include_banned: raw.include_banned });
  if (!parsed.success) return { ok: false, message: parsed.error.issues.map((i) => i.message).join("; ") };
  return { ok: true, includeBanned: parsed.data.include_banned };
}

export type ParamsResult<T> = { ok: true; value: T } | { ok: false; message: string };

/** Any route's parameters or body against its contract schema; the message names each refused parameter and why. */
export function parseParams<S extends z.ZodType>(schema: S, raw: unknown): ParamsResult<z.output<S>> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    return {
      ok: false,
      message: parsed.error.issues
        .map((i) => (i.code === "custom" || i.path.length === 0 ? i.message : `${i.path.join(".")}: ${i.message}`))
        .join("; "),
    };
  return { ok: true, value: parsed.data };
}
