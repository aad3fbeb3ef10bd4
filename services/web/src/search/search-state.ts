import type { SearchParams } from "../api/registry.ts";
import { boxParams, parseBox } from "./box-query.ts";
import { PAGE_SIZES } from "./platforms.ts";

/** The search page's state, all of it in the URL: `/?q=&os=&acc=&banned=1&limit=&page=`. */
export interface SearchState {
  q: string;
  os: string;
  acc: string;
  banned: boolean;
  limit: number;
  page: number;
}

const DEFAULT_LIMIT = 10;

function positive(v: string | null, fallback: number): number {
  const n = Number(v);
  return Number.isInteger(n) && n >= 1 ? n : fallback;
}

export function readSearchState(params: URLSearchParams): SearchState {
  const limit = positive(params.get("limit"), DEFAULT_LIMIT);
  return {
    q: params.get("q") ?? "",
    os: params.get("os") ?? "",
    acc: params.get("acc") ?? "",
    banned: params.get("banned") === "1",
    limit: (PAGE_SIZES as readonly number[]).includes(limit) ? limit : DEFAULT_LIMIT,
    page: positive(params.get("page"), 1),
  };
}

export function searchHref(s: SearchState): string {
  const q = new URLSearchParams();
  if (s.q) q.set("q", s.q);
  if (s.os) q.set("os", s.os);
  if (s.acc) q.set("acc", s.acc);
  if (s.banned) q.set("banned", "1");
  if (s.limit !== DEFAULT_LIMIT) q.set("limit", String(s.limit));
  if (s.page > 1) q.set("page", String(s.page));
  const text = q.toString();
  return text ? `/?${text}` : "/";
}

export function toSearchParams(s: SearchState): SearchParams {
  return {
    ...boxParams(parseBox(s.q)),
    supported_os: s.os || undefined,
    supported_accelerator: s.acc || undefined,
    include_banned: s.banned || undefined,
    page: s.page,
    limit: s.limit,
  };
}

/** The last search shown in this tab, so a node page can link back to those results. */
const LAST_SEARCH = "registry.lastSearch";
export const rememberSearch = (href: string): void => sessionStorage.setItem(LAST_SEARCH, href);
export const lastSearch = (): string => sessionStorage.getItem(LAST_SEARCH) ?? "/";
