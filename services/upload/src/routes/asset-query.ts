import type { Request } from "express";
import { isStorableText, ListAssetsQuery, Tag, TagsListQuery, UNSTORABLE_TEXT, type AssetSort, type SortOrder } from "@app/contracts";
import type { ReferenceKey, ReferenceQuery, TagCountQuery } from "../adapters/reference-store.ts";
import { decodeCursor } from "../domain/asset-cursor.ts";
import { UploadFailure } from "../domain/errors.ts";
import { describeIssue } from "./json-body.ts";

const TAG_PARAMS = new Set(["include_tags", "exclude_tags"]);

/**
 * The query as single strings: tag lists may come comma-separated, repeated, or both (as
 * ComfyUI accepts them); any other parameter given twice is refused rather than guessed.
 */
function flatten(req: Request, known: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.query)) {
    if (!known.includes(name)) continue;
    const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === "string");
    if (values.length !== 1 && !TAG_PARAMS.has(name)) throw new UploadFailure("invalid_query", `${name}: given more than once`);
    out[name] = values.join(",");
  }
  return out;
}

/** A filter is compared with stored text: text no record can hold is refused, not matched cut short. */
function storable(value: string, param: string): string {
  if (!isStorableText(value)) throw new UploadFailure("invalid_query", `${param}: ${UNSTORABLE_TEXT}`);
  return value;
}

function tagList(raw: string | undefined, param: string): string[] {
  if (!raw) return [];
  const tags: string[] = [];
  for (const part of raw.split(",")) {
    if (part.trim() === "") continue;
    const tag = Tag.safeParse(part);
    if (!tag.success) throw new UploadFailure("invalid_query", `${param}: ${describeIssue(tag.error).replace(/^body: /, "")}`);
    tags.push(tag.data);
  }
  return tags;
}

export interface ParsedListQuery extends ReferenceQuery {
  sort: AssetSort;
  order: SortOrder;
  after?: ReferenceKey;
}

/** GET /api/assets parameters, validated: 400 `invalid_query` / `invalid_cursor` naming the parameter. */
export function parseListQuery(req: Request): ParsedListQuery {
  const parsed = ListAssetsQuery.safeParse(flatten(req, Object.keys(ListAssetsQuery.shape)));
  if (!parsed.success) throw new UploadFailure("invalid_query", describeIssue(parsed.error).replace(/^body: /, ""));
  const q = parsed.data;
  if (q.after !== undefined && q.offset > 0) throw new UploadFailure("invalid_query", "offset: use offset or after, not both");
  return {
    includeTags: tagList(q.include_tags, "include_tags"),
    excludeTags: tagList(q.exclude_tags, "exclude_tags"),
    ...(q.name_contains?.trim() && { nameContains: storable(q.name_contains.trim(), "name_contains") }),
    sort: q.sort,
    order: q.order,
    limit: q.limit,
    offset: q.offset,
    ...(q.after !== undefined && { after: decodeCursor(q.after, q.sort, q.order) }),
  };
}

/** GET /api/tags parameters. */
export function parseTagsQuery(req: Request): TagCountQuery {
  const parsed = TagsListQuery.safeParse(flatten(req, Object.keys(TagsListQuery.shape)));
  if (!parsed.success) throw new UploadFailure("invalid_query", describeIssue(parsed.error).replace(/^body: /, ""));
  const { prefix, order, limit, offset } = parsed.data;
  return { ...(prefix && { prefix: storable(prefix, "prefix") }), order, limit, offset };
}
