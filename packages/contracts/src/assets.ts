import { z } from "zod";

/**
 * ComfyUI's asset API (`app/assets` in the ComfyUI server, `--enable-assets`), served over the
 * content-addressed store: an asset is a record (id, name, tags, metadata) naming stored bytes
 * by their hash; several records may name the same bytes.
 */

/** `blake3:` and the 64 lower-case hex digits of the bytes' blake3. */
export const AssetHash = z.string().regex(/^blake3:[0-9a-f]{64}$/, "must be 'blake3:' followed by 64 lower-case hex digits");

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

/** A tag as clients send it: trimmed and lower-cased (as ComfyUI does), never empty. */
export const Tag = z.string().trim().toLowerCase().min(1, "must not be empty").max(MAX_TAG_LENGTH).refine(isStorableText, UNSTORABLE_TEXT);
const TagList = z.array(Tag).max(MAX_TAGS_PER_ASSET);
const Name = z.string().trim().min(1, "must not be empty").max(MAX_NAME_LENGTH).refine(isStorableText, UNSTORABLE_TEXT);
const UserMetadata = z.record(z.string(), z.unknown());

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
  /** What the service knows of the asset (mask links, upload type and subfolder); absent when nothing. */
  metadata: UserMetadata.optional(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

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

/** POST /api/assets/from-hash. */
export const CreateFromHashBody = z.object({
  hash: AssetHash,
  name: Name.optional(),
  tags: TagList.default([]),
  user_metadata: UserMetadata.default({}),
});

/** PUT /api/assets/{id}: at least one field. */
export const UpdateAssetBody = z
  .object({ name: Name.optional(), tags: TagList.optional(), user_metadata: UserMetadata.optional() })
  .refine((b) => b.name !== undefined || b.tags !== undefined || b.user_metadata !== undefined, {
    message: "provide at least one of: name, tags, user_metadata",
  });

/** POST and DELETE /api/assets/{id}/tags. */
export const TagsBody = z.object({ tags: z.array(Tag).min(1, "give at least one tag").max(MAX_TAGS_PER_ASSET) });

export const ASSET_SORTS = ["created_at", "updated_at", "name", "size"] as const;
export const AssetSort = z.enum(ASSET_SORTS);
export const SortOrder = z.enum(["asc", "desc"]);

/** GET /api/assets query, as it arrives (tags: comma-separated or repeated). */
export const ListAssetsQuery = z.object({
  include_tags: z.string().optional().describe("Only assets carrying every one of these tags (comma-separated or repeated)."),
  exclude_tags: z.string().optional().describe("No asset carrying any of these tags (comma-separated or repeated)."),
  name_contains: z.string().max(MAX_NAME_LENGTH).optional().describe("Case-insensitive substring of the name."),
  limit: z.coerce.number().int().min(1).max(500).default(20),
  offset: z.coerce.number().int().min(0).default(0),
  after: z.string().optional().describe("The `next_cursor` of the previous page (keyset paging: stable while records are added)."),
  sort: AssetSort.default("created_at"),
  order: SortOrder.default("desc"),
});

/** GET /api/tags query. */
export const TagsListQuery = z.object({
  prefix: z.string().trim().toLowerCase().min(1).max(256).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).max(10_000_000).default(0),
  order: z.enum(["count_desc", "name_asc"]).default("count_desc"),
  include_zero: z.enum(["true", "false", "1", "0"]).optional().describe("Accepted for ComfyUI clients; a tag here always has a record."),
});

export type Asset = z.infer<typeof Asset>;
export type AssetCreated = z.infer<typeof AssetCreated>;
export type AssetsList = z.infer<typeof AssetsList>;
export type TagUsage = z.infer<typeof TagUsage>;
export type TagsList = z.infer<typeof TagsList>;
export type TagsAdded = z.infer<typeof TagsAdded>;
export type TagsRemoved = z.infer<typeof TagsRemoved>;
export type CreateFromHashBody = z.infer<typeof CreateFromHashBody>;
export type UpdateAssetBody = z.infer<typeof UpdateAssetBody>;
export type TagsBody = z.infer<typeof TagsBody>;
export type AssetSort = z.infer<typeof AssetSort>;
export type SortOrder = z.infer<typeof SortOrder>;
