import { z } from "zod";

/**
 * ComfyUI's asset API (`app/assets` in the ComfyUI server, `--enable-assets`), served over the
 * content-addressed store: an asset is a record (id, name, tags, metadata) naming stored bytes
 * by their hash; several records may name the same bytes.
 */

/** `blake3:` and the 64 lower-case hex digits of the bytes' blake3. */
export const AssetHash = z.string().regex(/^blake3:[0-9a-f]{64}$/, "must be 'blake3:' followed by 64 lower-case hex digits");

/**
 * A hash as a client sends it, on every route that takes one (`HEAD /api/assets/hash/{hash}`,
 * `from-hash`, `POST /api/assets`' `hash` field): read trimmed and lower-cased, as ComfyUI reads
 * it (`strip().lower()`), then it must be an AssetHash. One rule, so an upper-case hash means
 * the same content everywhere.
 */
export const AssetHashInput = z.string().trim().toLowerCase().pipe(AssetHash);

export const MAX_TAG_LENGTH = 1024;
export const MAX_TAGS_PER_ASSET = 64;
export const MAX_NAME_LENGTH = 512;

/**
 * Text kept in database columns (tags, names) or compared with them (filters, cursors) must be
 * text both record stores keep whole:
 * - U+0000: node-sqlite3-wasm binds a string as a NUL-terminated C string, so SQLite would keep
 *   `".\u0000x"` as `"."` (silently, and two such tags then collide); PostgreSQL refuses it.
 * - an unpaired surrogate (`"\ud800"`): not text in UTF-8; `pg` sends it as U+FFFD, so it would
 *   be changed (and two of them collide).
 * Such input is the client's mistake and is refused (400), never stored cut short or changed.
 */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const UNSTORABLE_TEXT = "must not contain U+0000 or an unpaired surrogate (text the database cannot keep whole)";
export const isStorableText = (text: string): boolean => !UNSTORABLE.test(text);

/** A tag as clients send it: trimmed, case kept (as ComfyUI keeps it: filters are case-sensitive), never empty. */
export const Tag = z.string().trim().min(1, "must not be empty").max(MAX_TAG_LENGTH).refine(isStorableText, UNSTORABLE_TEXT);
const TagList = z.array(Tag).max(MAX_TAGS_PER_ASSET);
const Name = z.string().trim().min(1, "must not be empty").max(MAX_NAME_LENGTH).refine(isStorableText, UNSTORABLE_TEXT);

/** Distinct tags one filter parameter (`tags_all`, `tags_any`, `tags_none` or their old names) may name: ComfyUI's cap. */
export const MAX_FILTER_TAGS = 100;
/** Nesting of objects and arrays in `user_metadata` and `metadata_filter` (the value itself is level 1). */
export const MAX_METADATA_DEPTH = 32;

/** Deeper than `max` levels of objects and arrays; stops counting at the limit, so a hostile depth costs nothing. */
export function nestingExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

const isJsonObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A JSON object kept exactly as parsed: the object itself is passed on (a `__proto__` key is
 * an own property of what JSON.parse made, and stays data; copying it into a new object
 * would set the copy's prototype and drop the key), and its nesting is bounded.
 */
export const UserMetadata = z
  .unknown()
  .refine(isJsonObject, "must be a JSON object")
  .refine((v) => !nestingExceeds(v, MAX_METADATA_DEPTH), `must not nest objects and arrays more than ${MAX_METADATA_DEPTH} levels deep`)
  // The documents say what it is (a custom type cannot be written as JSON Schema).
  .meta({ type: "object", additionalProperties: true }) as unknown as z.ZodType<Record<string, unknown>>;

export const Asset = z.object({
  id: z.uuid(),
  name: z.string(),
  /** `blake3:<hex>` of the bytes. */
  hash: AssetHash,
  /** Same as `hash` (ComfyUI answers both). */
  asset_hash: AssetHash,
  size: z.number().int().nonnegative(),
  mime_type: z.string(),
  tags: z.array(z.string()),
  user_metadata: UserMetadata,
  /** The asset nominated as this one's preview (PUT it, or send it on upload); absent when none. */
  preview_id: z.uuid().optional(),
  /**
   * Where a client fetches the picture for this asset (its own bytes when a browser can show them,
   * or the nominated preview's): a signed, expiring `/api/view?…` URL that needs no key (an
   * `<img src>` cannot send one), serving byte ranges. Absent for content with no visual form
   * (model weights) and when the nominated preview is gone.
   */
  preview_url: z.string().optional(),
  /**
   * For an upload that wrote new bytes: the file name a ComfyUI loader would be given
   * (`<hash hex><extension of the uploaded name>`), and the same under its model category for
   * models (`checkpoints/<…>`). Absent on records that wrote no file (known bytes, from-hash).
   */
  loader_path: z.string().optional(),
  display_name: z.string().optional(),
  /** What the service knows of the asset (mask links, upload type and subfolder); absent when nothing. */
  metadata: UserMetadata.optional(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  /** The last download of the content (GET /api/assets/{id}/content), or the creation. */
  last_access_time: z.iso.datetime(),
});

/** `created_new`: the bytes were new to the store (false when only a record was added for known content). */
export const AssetCreated = Asset.extend({ created_new: z.boolean() });

export const AssetsList = z.object({
  assets: z.array(Asset),
  /** Records matching the filters, whatever the page. */
  total: z.number().int().nonnegative(),
  has_more: z.boolean(),
  /** Pass as `after` for the next page; absent on the last page. */
  next_cursor: z.string().optional(),
});

export const TagUsage = z.object({ name: z.string(), count: z.number().int().nonnegative() });
export const TagsList = z.object({ tags: z.array(TagUsage), total: z.number().int().nonnegative(), has_more: z.boolean() });

export const TagsAdded = z.object({ added: z.array(z.string()), already_present: z.array(z.string()), total_tags: z.array(z.string()) });
export const TagsRemoved = z.object({ removed: z.array(z.string()), not_present: z.array(z.string()), total_tags: z.array(z.string()) });

export const TagHistogram = z.object({ tag_counts: z.record(z.string(), z.number().int().nonnegative()) });

/** A MIME type as a client declares it (`type/subtype`, parameters allowed); used when the bytes say nothing more precise. */
export const MimeType = z
  .string()
  .trim()
  .max(255)
  .regex(/^[\w.+-]+\/[\w.+-]+(?:\s*;.*)?$/, "must be a MIME type such as 'application/octet-stream'");
const PreviewId = z.uuid().transform((id) => id.toLowerCase());

/** POST /api/assets/from-hash. */
export const CreateFromHashBody = z.object({
  hash: AssetHashInput,
  name: Name.optional(),
  tags: TagList.default([]),
  user_metadata: UserMetadata.default({}),
  mime_type: MimeType.optional(),
  preview_id: PreviewId.optional(),
});

/** PUT /api/assets/{id}: at least one field; `preview_id: null` clears the preview. */
export const UpdateAssetBody = z
  .object({
    name: Name.optional(),
    tags: TagList.optional(),
    user_metadata: UserMetadata.optional(),
    preview_id: PreviewId.nullable().optional(),
  })
  .refine((b) => b.name !== undefined || b.tags !== undefined || b.user_metadata !== undefined || b.preview_id !== undefined, {
    message: "provide at least one of: name, tags, user_metadata, preview_id",
  });

/** The text fields of a POST /api/assets multipart body, after each is read as ComfyUI reads it. */
export const UploadAssetFields = z.object({
  tags: TagList,
  name: Name.optional(),
  user_metadata: UserMetadata,
  mime_type: MimeType.optional(),
  preview_id: PreviewId.optional(),
});

/** POST and DELETE /api/assets/{id}/tags (a record still holds at most MAX_TAGS_PER_ASSET after an add). */
export const TagsBody = z.object({ tags: z.array(Tag).min(1, "give at least one tag").max(MAX_TAGS_PER_ASSET) });

export const ASSET_SORTS = ["created_at", "updated_at", "name", "size", "last_access_time"] as const;
export const AssetSort = z.enum(ASSET_SORTS);
export const SortOrder = z.enum(["asc", "desc"]);

/** The filters shared by GET /api/assets and GET /api/assets/tags/refine, as they arrive (tags: comma-separated or repeated). */
export const AssetFilterQuery = z.object({
  tags_all: z.string().optional().describe(`Only assets carrying every one of these tags (at most ${MAX_FILTER_TAGS}; case-sensitive).`),
  tags_any: z.string().optional().describe(`Only assets carrying at least one of these tags (at most ${MAX_FILTER_TAGS}).`),
  tags_none: z.string().optional().describe(`No asset carrying any of these tags (at most ${MAX_FILTER_TAGS}); wins over tags_any.`),
  include_tags: z.string().optional().describe("The older name of tags_all (both at once: 400 INVALID_TAG_FILTER)."),
  exclude_tags: z.string().optional().describe("The older name of tags_none (both at once: 400 INVALID_TAG_FILTER)."),
  name_contains: z.string().max(MAX_NAME_LENGTH).optional().describe("Case-insensitive substring of the name."),
  metadata_filter: z
    .string()
    .max(16 * 1024)
    .optional()
    .describe(
      "A JSON object: every key must match user_metadata (a scalar equals, type-strict; a list means any of; null means missing or null; an object equals).",
    ),
});

/** GET /api/assets query. */
export const ListAssetsQuery = AssetFilterQuery.extend({
  limit: z.coerce.number().int().min(1).max(500).default(20),
  offset: z.coerce.number().int().min(0).default(0),
  after: z
    .string()
    .optional()
    .describe("The `next_cursor` of the previous page (keyset paging: stable while records are added); wins over offset."),
  sort: AssetSort.default("created_at"),
  order: SortOrder.default("desc"),
});

/** GET /api/tags query. */
export const TagsListQuery = z.object({
  prefix: z.string().trim().min(1).max(256).optional().describe("Tags starting with this text (case-sensitive, as tags keep their case)."),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).max(10_000_000).default(0),
  order: z.enum(["count_desc", "name_asc"]).default("count_desc"),
  include_zero: z
    .enum(["true", "false", "1", "0"])
    .default("true")
    .transform((v) => v === "true" || v === "1")
    .describe("Also list this owner's tags no record carries any more (count 0), as ComfyUI does by default."),
});

/** GET /api/assets/tags/refine query: the list filters, and how many tags to answer. */
export const TagsRefineQuery = AssetFilterQuery.extend({ limit: z.coerce.number().int().min(1).max(1000).default(100) });

export type Asset = z.infer<typeof Asset>;
export type AssetCreated = z.infer<typeof AssetCreated>;
export type AssetsList = z.infer<typeof AssetsList>;
export type TagUsage = z.infer<typeof TagUsage>;
export type TagsList = z.infer<typeof TagsList>;
export type TagsAdded = z.infer<typeof TagsAdded>;
export type TagsRemoved = z.infer<typeof TagsRemoved>;
export type TagHistogram = z.infer<typeof TagHistogram>;
export type UploadAssetFields = z.infer<typeof UploadAssetFields>;
export type CreateFromHashBody = z.infer<typeof CreateFromHashBody>;
export type UpdateAssetBody = z.infer<typeof UpdateAssetBody>;
export type TagsBody = z.infer<typeof TagsBody>;
export type AssetSort = z.infer<typeof AssetSort>;
export type SortOrder = z.infer<typeof SortOrder>;

/**
 * ComfyUI's error envelope, answered by every asset route (`/api/assets*`, `/api/tags`):
 * `code` is upper-case (`ASSET_NOT_FOUND`, `INVALID_QUERY`, `INVALID_TAG_FILTER`, …); `details`
 * names what was wrong when there is more to say (`{id}`, `{parameters, conflicting_tags}`), else `{}`.
 */
export const AssetError = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()) }),
});
export type AssetError = z.infer<typeof AssetError>;
