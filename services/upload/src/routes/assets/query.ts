import type { Request } from "express";
import {
  AssetFilterQuery,
  isStorableText,
  ListAssetsQuery,
  MAX_FILTER_TAGS,
  MAX_METADATA_DEPTH,
  nestingExceeds,
  Tag,
  TagsListQuery,
  TagsRefineQuery,
  UNSTORABLE_TEXT,
  type AssetSort,
  type SortOrder,
} from "@app/contracts";
import type { z } from "zod";
import type { ReferenceFilter, TagCountQuery } from "../../adapters/references/reference-store.ts";
import type { ReferenceKey } from "../../domain/asset-reference.ts";
import { decodeCursor } from "../../domain/asset-cursor.ts";
import { ApiFailure } from "../../domain/errors.ts";
import { MetadataFilterError, metadataConditions, type MetadataCondition } from "../../domain/metadata-index.ts";
import { describeIssue } from "../../http/json-body.ts";

const TAG_PARAMS = new Set(["tags_all", "tags_any", "tags_none", "include_tags", "exclude_tags"]);

/**
 * The query as single strings: tag lists may come comma-separated, repeated, or both (as
 * ComfyUI accepts them); any other parameter given twice is refused rather than guessed.
 */
function flatten(req: Request, known: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.query)) {
    if (!known.includes(name)) continue;
    const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === "string");
    if (values.length !== 1 && !TAG_PARAMS.has(name)) throw new ApiFailure("invalid_query", `${name}: given more than once`);
    out[name] = values.join(",");
  }
  return out;
}

function parseQuery<S extends z.ZodObject>(schema: S, req: Request): z.infer<S> {
  const parsed = schema.safeParse(flatten(req, Object.keys(schema.shape)));
  if (!parsed.success) throw new ApiFailure("invalid_query", describeIssue(parsed.error).replace(/^body: /, ""));
  return parsed.data;
}

/** A filter is compared with stored text: text no record can hold is refused, not matched cut short. */
function storable(value: string, param: string): string {
  if (!isStorableText(value)) throw new ApiFailure("invalid_query", `${param}: ${UNSTORABLE_TEXT}`);
  return value;
}

/** One tag parameter: comma-separated, trimmed, case kept, duplicates dropped, at most MAX_FILTER_TAGS distinct (ComfyUI's cap, `details.parameter` naming it). */
function tagList(raw: string | undefined, param: string): string[] {
  const tags = new Set<string>();
  for (const part of (raw ?? "").split(",")) {
    if (part.trim() === "") continue;
    const tag = Tag.safeParse(part);
    if (!tag.success) throw new ApiFailure("invalid_query", `${param}: ${describeIssue(tag.error).replace(/^body: /, "")}`);
    tags.add(tag.data);
  }
  if (tags.size > MAX_FILTER_TAGS) {
    throw new ApiFailure("invalid_tag_filter", `${param}: names ${tags.size} tags; a filter takes at most ${MAX_FILTER_TAGS}`, {
      details: { parameter: param, parameters: [param], max: MAX_FILTER_TAGS },
    });
  }
  return [...tags];
}

/**
 * `tags_all`/`tags_any`/`tags_none`, with `include_tags`/`exclude_tags` as older names of the
 * first and last, as ComfyUI reads them: an old and a new name for the same slot together, or
 * a tag both required and excluded when a new name is involved, is 400 `INVALID_TAG_FILTER`
 * naming the parameters; old names alone keep their old meaning (a contradiction is an empty page).
 */
function tagFilters(q: z.infer<typeof AssetFilterQuery>): Pick<ReferenceFilter, "tagsAll" | "tagsAny" | "tagsNone"> {
  const lists = {
    tags_all: tagList(q.tags_all, "tags_all"),
    tags_any: tagList(q.tags_any, "tags_any"),
    tags_none: tagList(q.tags_none, "tags_none"),
    include_tags: tagList(q.include_tags, "include_tags"),
    exclude_tags: tagList(q.exclude_tags, "exclude_tags"),
  };
  for (const [old, current] of [
    ["include_tags", "tags_all"],
    ["exclude_tags", "tags_none"],
  ] as const) {
    if (lists[old].length > 0 && lists[current].length > 0) {
      throw new ApiFailure("invalid_tag_filter", `${old} and ${current} are the same filter; send one of them`, {
        details: { parameters: [old, current] },
      });
    }
  }
  const allParam = lists.tags_all.length > 0 ? "tags_all" : "include_tags";
  const noneParam = lists.tags_none.length > 0 ? "tags_none" : "exclude_tags";
  const tagsAll = lists[allParam];
  const tagsNone = lists[noneParam];
  const conflicting = tagsAll.filter((t) => tagsNone.includes(t));
  if (conflicting.length > 0 && (allParam === "tags_all" || noneParam === "tags_none")) {
    throw new ApiFailure("invalid_tag_filter", `tags both required and excluded: ${conflicting.slice(0, 8).join(", ")}`, {
      details: { conflicting_tags: conflicting, parameters: [allParam, noneParam] },
    });
  }
  return { tagsAll, tagsAny: lists.tags_any, tagsNone };
}

/** `metadata_filter`: a JSON object, bounded in depth, keys and values (400 `INVALID_QUERY` otherwise). */
function metadataFilter(raw: string | undefined): MetadataCondition[] {
  if (raw === undefined || raw.trim() === "") return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new ApiFailure("invalid_query", `metadata_filter must be JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new ApiFailure("invalid_query", "metadata_filter must be a JSON object");
  if (nestingExceeds(parsed, MAX_METADATA_DEPTH))
    throw new ApiFailure("invalid_query", `metadata_filter nests more than ${MAX_METADATA_DEPTH} levels`);
  try {
    return metadataConditions(parsed as Record<string, unknown>);
  } catch (err) {
    if (err instanceof MetadataFilterError) throw new ApiFailure("invalid_query", `metadata_filter ${err.message}`);
    throw err;
  }
}

function filterOf(q: z.infer<typeof AssetFilterQuery>, owner: string): ReferenceFilter {
  return {
    owner,
    ...tagFilters(q),
    ...(q.name_contains?.trim() && { nameContains: storable(q.name_contains.trim(), "name_contains") }),
    metadata: metadataFilter(q.metadata_filter),
  };
}

export interface ParsedListQuery extends ReferenceFilter {
  sort: AssetSort;
  order: SortOrder;
  limit: number;
  offset: number;
  after?: ReferenceKey;
}

/** GET /api/assets parameters, validated: 400 `INVALID_QUERY` / `INVALID_TAG_FILTER` / `INVALID_CURSOR` naming the parameter. A cursor wins over offset. */
export function parseListQuery(req: Request, owner: string): ParsedListQuery {
  const q = parseQuery(ListAssetsQuery, req);
  return {
    ...filterOf(q, owner),
    sort: q.sort,
    order: q.order,
    limit: q.limit,
    offset: q.after !== undefined ? 0 : q.offset,
    ...(q.after !== undefined && { after: decodeCursor(q.after, q.sort, q.order) }),
  };
}

/** GET /api/assets/tags/refine parameters. */
export function parseRefineQuery(req: Request, owner: string): { filter: ReferenceFilter; limit: number } {
  const q = parseQuery(TagsRefineQuery, req);
  return { filter: filterOf(q, owner), limit: q.limit };
}

/** GET /api/tags parameters. */
export function parseTagsQuery(req: Request, owner: string): TagCountQuery {
  const { prefix, order, limit, offset, include_zero } = parseQuery(TagsListQuery, req);
  return { owner, ...(prefix && { prefix: storable(prefix, "prefix") }), order, limit, offset, includeZero: include_zero };
}
