import { z } from "zod";

/**
 * GET /nodes/search query parameters. Express hands us strings, arrays (repeated keys) or
 * objects (`a[b]=c`); only a single string is a valid value, so each parameter is checked
 * for that first and every message names the parameter and why it was refused.
 */

export const SEARCH_LIMIT_MAX = 100;
export const SEARCH_TEXT_MAX = 512;

const single = (name: string) =>
  z.unknown().optional().transform((v, ctx) => {
    if (v === undefined) return undefined;
    if (typeof v !== "string") {
      ctx.addIssue({ code: "custom", message: `${name} must be given once, as a single value` });
      return z.NEVER;
    }
    return v;
  });

const positiveInt = (name: string, min: number, max: number | undefined, fallback: number) =>
  single(name).transform((v, ctx) => {
    if (v === undefined) return fallback;
    if (!/^\d{1,9}$/.test(v)) {
      ctx.addIssue({ code: "custom", message: `${name} must be an integer${max ? ` from ${min} to ${max}` : ` of at least ${min}`}, got ${JSON.stringify(v.slice(0, 40))}` });
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

const bool = (name: string) =>
  single(name).transform((v, ctx) => {
    if (v === undefined) return false;
    if (v === "true") return true;
    if (v === "false") return false;
    ctx.addIssue({ code: "custom", message: `${name} must be true or false, got ${JSON.stringify(v.slice(0, 40))}` });
    return z.NEVER;
  });

export const SearchQueryParams = z.object({
  page: positiveInt("page", 1, undefined, 1),
  limit: positiveInt("limit", 1, SEARCH_LIMIT_MAX, 10),
  search: text("search"),
  repository_url_search: text("repository_url_search"),
  app_node_search: text("app_node_search"),
  supported_os: text("supported_os"),
  supported_accelerator: text("supported_accelerator"),
  include_banned: bool("include_banned"),
});

export type SearchQuery = z.output<typeof SearchQueryParams>;

/** The OpenAPI-facing shape of the same parameters (all optional strings on the wire). */
export const SearchQueryWire = z.object({
  page: z.number().int().min(1).default(1),
  limit: z.number().int().min(1).max(SEARCH_LIMIT_MAX).default(10),
  search: z.string().max(SEARCH_TEXT_MAX),
  repository_url_search: z.string().max(SEARCH_TEXT_MAX),
  app_node_search: z.string().max(SEARCH_TEXT_MAX),
  supported_os: z.string().max(SEARCH_TEXT_MAX),
  supported_accelerator: z.string().max(SEARCH_TEXT_MAX),
  include_banned: z.boolean(),
}).partial();
