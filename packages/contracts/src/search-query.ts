import { z } from "zod";

/**
 * GET /nodes/search query parameters. Express hands us strings, arrays (repeated keys) or
 * objects (`a[b]=c`); only a single string is a valid value, so each parameter is checked
 * for that first and every message names the parameter and why it was refused.
 */

export const SEARCH_LIMIT_MAX = 100;
export const SEARCH_TEXT_MAX = 512;

export const single = (name: string) =>
  z
    .unknown()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      if (typeof v !== "string") {
        ctx.addIssue({ code: "custom", message: `${name} must be given once, as a single value` });
        return z.NEVER;
      }
      return v;
    });

export const positiveInt = <F extends number | undefined>(name: string, min: number, max: number | undefined, fallback: F) =>
  single(name).transform((v, ctx) => {
    if (v === undefined) return fallback;
    if (!/^\d{1,9}$/.test(v)) {
      ctx.addIssue({
        code: "custom",
        message: `${name} must be an integer${max ? ` from ${min} to ${max}` : ` of at least ${min}`}, got ${JSON.stringify(v.slice(0, 40))}`,
      });
      return z.NEVER;
    }
    const n = Number(v);
    if (n < min || (max !== undefined && n > max)) {
      ctx.addIssue({ code: "custom", message: `${name} must be ${max ? `from ${min} to ${max}` : `at least ${min}`}, got ${n}` });
      return z.NEVER;
    }
    return n;
  });

const text = (name: string) =>
  single(name).transform((v, ctx) => {
    if (v === undefined) return undefined;
    if (v.length > SEARCH_TEXT_MAX) {
      ctx.addIssue({ code: "custom", message: `${name} must be at most ${SEARCH_TEXT_MAX} characters, got ${v.length}` });
      return z.NEVER;
    }
    const trimmed = v.trim();
    return trimmed === "" ? undefined : trimmed;
  });

export const bool = (name: string) =>
  single(name).transform((v, ctx) => {
    if (v === undefined) return false;
    if (v === "true") return true;
    if (v === "false") return false;
    ctx.addIssue({ code: "custom", message: `${name} must be true or false, got ${JSON.stringify(v.slice(0, 40))}` });
    return z.NEVER;
  });

/**
 * At most this many `node_id` values in one list request (a client's installed packs). Below the
 * query parser's 1,000-key cap (node:querystring's maxKeys), so a longer list is refused rather
 * than cut short without a word.
 */
export const NODE_ID_MAX = 500;

/** `node_id` (repeatable): the registry's "only these packs" filter. Blank values count as absent. */
const nodeIds = z
  .unknown()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined) return undefined;
    const list = typeof v === "string" ? [v] : Array.isArray(v) && v.every((x) => typeof x === "string") ? v : undefined;
    if (!list) {
      ctx.addIssue({ code: "custom", message: "node_id must be plain values, repeated for several packs (node_id=a&node_id=b)" });
      return z.NEVER;
    }
    if (list.length > NODE_ID_MAX || list.some((id) => id.length > SEARCH_TEXT_MAX)) {
      ctx.addIssue({
        code: "custom",
        message: `node_id takes at most ${NODE_ID_MAX} values of at most ${SEARCH_TEXT_MAX} characters, got ${list.length}`,
      });
      return z.NEVER;
    }
    const ids = [...new Set(list.map((id) => id.trim()).filter((id) => id !== ""))];
    return ids.length > 0 ? ids : undefined;
  });

/**
 * A production list parameter this service does not implement: refused, never ignored into an
 * answer the client would take for the one it asked.
 */
const refused = (name: string, why: string) =>
  z
    .unknown()
    .optional()
    .superRefine((v, ctx) => {
      if (v !== undefined) ctx.addIssue({ code: "custom", message: `${name} is not supported by this service: ${why}` });
    })
    .transform(() => undefined);

export const SearchQueryFields = z.object({
  page: positiveInt("page", 1, undefined, 1),
  limit: positiveInt("limit", 1, SEARCH_LIMIT_MAX, undefined),
  search: text("search"),
  repository_url_search: text("repository_url_search"),
  app_node_search: text("app_node_search"),
  supported_os: text("supported_os"),
  supported_accelerator: text("supported_accelerator"),
  include_banned: bool("include_banned"),
  node_id: nodeIds,
  // Production list parameters that change nothing here: `latest` bypasses a cache this service
  // does not have, and ComfyUI-Manager sends `comfyui_version` and `form_factor` on every page of
  // its start-up list (the answer is every pack either way). Validated, then unused.
  latest: bool("latest"),
  comfyui_version: text("comfyui_version"),
  form_factor: text("form_factor"),
  sort: refused("sort", "the order is relevance, then popularity (search_ranking, downloads, repo_stars), then id"),
  timestamp: refused("timestamp", "the catalog keeps no per-pack update times; read the whole list"),
});

/**
 * The list and search parameters. `limit` defaults to 10, or with `node_id` to the number of ids
 * asked (so up to NODE_ID_MAX, past the 100 a `limit` may ask): the ComfyUI frontend asks for its
 * installed packs by `node_id` alone and reads one page.
 */
export const SearchQueryParams = SearchQueryFields.transform(
  ({ latest: _l, comfyui_version: _c, form_factor: _f, sort: _s, timestamp: _t, ...q }) => ({
    ...q,
    limit: q.limit ?? q.node_id?.length ?? 10,
  }),
);

export type SearchQuery = z.output<typeof SearchQueryParams>;

/** The OpenAPI-facing shape of the same parameters (all optional strings on the wire). */
export const SearchQueryWire = z
  .object({
    page: z.number().int().min(1).default(1),
    limit: z.number().int().min(1).max(SEARCH_LIMIT_MAX).default(10),
    search: z.string().max(SEARCH_TEXT_MAX),
    repository_url_search: z.string().max(SEARCH_TEXT_MAX),
    app_node_search: z.string().max(SEARCH_TEXT_MAX),
    supported_os: z.string().max(SEARCH_TEXT_MAX),
    supported_accelerator: z.string().max(SEARCH_TEXT_MAX),
    include_banned: z.boolean(),
    node_id: z.array(z.string().max(SEARCH_TEXT_MAX)).max(NODE_ID_MAX),
    latest: z.boolean(),
    comfyui_version: z.string().max(SEARCH_TEXT_MAX),
    form_factor: z.string().max(SEARCH_TEXT_MAX),
  })
  .partial();
