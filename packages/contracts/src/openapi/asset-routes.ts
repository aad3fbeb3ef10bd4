import type { OpenAPIRegistry, RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { AssetHash, CreateFromHashBody, ListAssetsQuery, TagsBody, TagsListQuery, TagsRefineQuery, UpdateAssetBody } from "../assets.ts";
import { assetRateLimited, bareRateLimited, binary, errorsOf, json, security } from "./components.ts";
import { param } from "./parameters.ts";

/** The parts of an asset operation besides its errors; every one is keyed and answers ComfyUI's envelope (`AssetError`). */
export type AssetOperation = Omit<RouteConfig, "method" | "path" | "operationId" | "responses"> & { responses?: RouteConfig["responses"] };

/** An asset operation: keyed, its errors (401 and 429 always) in ComfyUI's envelope. */
export function registerKeyed(
  registry: OpenAPIRegistry,
  method: RouteConfig["method"],
  path: string,
  operationId: string,
  op: AssetOperation,
  errors: Record<string, string>,
): void {
  registry.registerPath({
    ...op,
    method,
    path,
    operationId,
    tags: ["Assets"],
    security,
    responses: {
      ...op.responses,
      ...errorsOf("AssetError", { "401": "Missing or unknown API key (`UNAUTHORIZED`).", ...errors }),
      ...assetRateLimited,
    },
  });
}

const assetId = z.object({ id: param(z.uuid(), "The record's id (any case).") });
const jsonBody = (schema: z.ZodType) => ({ required: true, content: { "application/json": { schema } } });
const bodyErrors = {
  "400": "Bad JSON (`INVALID_JSON`) or a field that does not validate (`INVALID_BODY`, the message names it).",
  "413": "JSON body over 64 KiB.",
  "408": "The body did not arrive within BODY_TIMEOUT_MS (`REQUEST_TIMEOUT`); the connection is closed.",
};

/** POST /api/assets' multipart form, as ComfyUI's UploadAssetSpec reads it. */
const UploadAssetForm = z.object({
  file: z
    .string()
    .optional()
    .meta({ contentMediaType: "application/octet-stream" })
    .describe("The bytes (any type). Optional when `hash` names stored content."),
  tags: z
    .string()
    .describe(
      "A JSON array or comma-separated list; may be repeated. New bytes need exactly one of input, output, models (models: one `model_type:<category>`).",
    ),
  name: z.string().max(512).optional(),
  user_metadata: z.string().optional().describe("A JSON object (at most 32 levels deep)."),
  hash: z
    .string()
    .optional()
    .describe(
      "`blake3:<hex>`: sent before `file` and naming stored content, the file is not stored (the shortcut); otherwise it must be the file's hash.",
    ),
  mime_type: z.string().optional().describe("Used only when the bytes say nothing about their type."),
  preview_id: z.uuid().optional().describe("Another of the owner's records to show as this one's preview."),
});

function registerByHash(registry: OpenAPIRegistry, prefix: string, suffix: string): void {
  registry.registerPath({
    method: "head",
    path: `${prefix}/assets/hash/{hash}`,
    operationId: `HeadAssetByHash${suffix}`,
    tags: ["Assets"],
    security,
    summary: "Whether bytes with this hash are stored (a stat of the store; the bytes are not read). No body.",
    request: { params: z.object({ hash: AssetHash }) },
    responses: {
      "200": { description: "Stored." },
      "400": { description: "Not `blake3:` followed by 64 lower-case hex digits." },
      "401": { description: "Missing or unknown API key." },
      "404": { description: "Not stored." },
      ...bareRateLimited,
    },
  });
  registerKeyed(
    registry,
    "post",
    `${prefix}/assets/from-hash`,
    `CreateAssetFromHash${suffix}`,
    {
      summary: "A new record for bytes already stored; no upload.",
      request: { body: jsonBody(CreateFromHashBody) },
      responses: { "201": json("AssetCreated", "The new record.") },
    },
    { ...bodyErrors, "404": "No stored bytes have this hash (`ASSET_NOT_FOUND`)." },
  );
}

/** What ComfyUI's scanner routes answer here: this service has no folders of its own. */
function registerUnsupported(registry: OpenAPIRegistry, prefix: string, suffix: string): void {
  const none = { "501": "Not supported (`NOT_SUPPORTED`)." };
  registerKeyed(
    registry,
    "post",
    `${prefix}/assets/seed`,
    `SeedAssets${suffix}`,
    { summary: "ComfyUI's scan of its own folders: this service has none.", responses: {} },
    none,
  );
  registerKeyed(
    registry,
    "post",
    `${prefix}/assets/prune`,
    `PruneAssets${suffix}`,
    { summary: "ComfyUI's pruning of files on disk: this service has none.", responses: {} },
    none,
  );
}

function registerCollection(registry: OpenAPIRegistry, prefix: string, suffix: string): void {
  registerKeyed(
    registry,
    "post",
    `${prefix}/assets`,
    `UploadAsset${suffix}`,
    {
      summary: "Upload any asset (multipart, streamed and hashed, never buffered whole), or record stored content by its hash.",
      request: { body: { required: true, content: { "multipart/form-data": { schema: UploadAssetForm } } } },
      responses: {
        "201": json("AssetCreated", "New bytes stored, and their record."),
        "200": json("AssetCreated", "The bytes were known: only a record was added (`created_new: false`)."),
      },
    },
    {
      "400":
        "`EMPTY_UPLOAD`, `MISSING_FILE` (no file and no known hash), `INVALID_HASH`, `HASH_MISMATCH`, `INVALID_BODY` (a field; the message names it), `MALFORMED_MULTIPART`.",
      "404": "A hash-only upload whose bytes went between the check and the record (`ASSET_NOT_FOUND`).",
      "408": "The body stalled for BODY_TIMEOUT_MS (`REQUEST_TIMEOUT`).",
      "413": "Over ASSET_UPLOAD_MAX_BYTES (`PAYLOAD_TOO_LARGE`); nothing stored.",
      "415": "Not multipart (`UNSUPPORTED_MEDIA_TYPE`).",
    },
  );
  registerKeyed(
    registry,
    "get",
    `${prefix}/assets`,
    `ListAssets${suffix}`,
    {
      summary: "The key's owner's records, filtered by tags, name and user_metadata, sorted, paged by offset or by cursor.",
      request: { query: ListAssetsQuery },
      responses: { "200": json("AssetsList", "A page of records.") },
    },
    {
      "400":
        "A parameter out of range or malformed (`INVALID_QUERY`), tag filters that contradict or name over 100 distinct tags (`INVALID_TAG_FILTER`, `details.parameter` naming it), or a cursor that is not this sort's (`INVALID_CURSOR`).",
    },
  );
}

function registerRecord(registry: OpenAPIRegistry, prefix: string, suffix: string): void {
  const path = `${prefix}/assets/{id}`;
  const missing = { "404": "No such record." };
  registerKeyed(
    registry,
    "get",
    path,
    `GetAsset${suffix}`,
    { request: { params: assetId }, responses: { "200": json("Asset", "The record.") } },
    missing,
  );
  registerKeyed(
    registry,
    "put",
    path,
    `UpdateAsset${suffix}`,
    {
      summary: "Rename, retag, replace user_metadata, or set or clear (null) preview_id.",
      request: { params: assetId, body: jsonBody(UpdateAssetBody) },
      responses: { "200": json("Asset", "The updated record.") },
    },
    { ...bodyErrors, ...missing },
  );
  registerKeyed(
    registry,
    "delete",
    path,
    `DeleteAsset${suffix}`,
    {
      summary: "Delete the record; the bytes stay (content is shared and kept, as ComfyUI keeps it).",
      request: { params: assetId },
      responses: { "204": { description: "Deleted." } },
    },
    missing,
  );
  registerKeyed(
    registry,
    "get",
    `${path}/content`,
    `GetAssetContent${suffix}`,
    {
      summary: "The bytes, under /api/view's caching and Range rules.",
      request: { params: assetId, query: z.object({ disposition: z.enum(["attachment", "inline"]).optional() }) },
      responses: {
        "200": {
          description: "The bytes (ETag = the hash, immutable Cache-Control).",
          content: { "application/octet-stream": { schema: binary() } },
        },
        "206": { description: "The requested byte range." },
        "302": { description: "Redirect to a presigned URL (S3 store with S3_VIEW_MODE=redirect)." },
        "304": { description: "Not modified (If-None-Match matched the ETag)." },
      },
    },
    { ...missing, "416": "Unsatisfiable range." },
  );
  const tags = { params: assetId, body: jsonBody(TagsBody) };
  registerKeyed(
    registry,
    "post",
    `${path}/tags`,
    `AddAssetTags${suffix}`,
    { request: tags, responses: { "200": json("TagsAdded", "Which tags were added.") } },
    { ...bodyErrors, ...missing },
  );
  registerKeyed(
    registry,
    "delete",
    `${path}/tags`,
    `RemoveAssetTags${suffix}`,
    { request: tags, responses: { "200": json("TagsRemoved", "Which tags were removed.") } },
    { ...bodyErrors, ...missing },
  );
}

function registerTags(registry: OpenAPIRegistry, prefix: string, suffix: string): void {
  registerKeyed(
    registry,
    "get",
    `${prefix}/assets/tags/refine`,
    `RefineAssetTags${suffix}`,
    {
      summary: "How many of the filtered records carry each tag.",
      request: { query: TagsRefineQuery },
      responses: { "200": json("TagHistogram", "Tag counts.") },
    },
    { "400": "A parameter out of range or malformed (`INVALID_QUERY`), or tag filters that contradict (`INVALID_TAG_FILTER`)." },
  );
  registerKeyed(
    registry,
    "get",
    `${prefix}/tags`,
    `ListTags${suffix}`,
    {
      summary: "Tags with how many records carry each.",
      request: { query: TagsListQuery },
      responses: { "200": json("TagsList", "A page of tags.") },
    },
    { "400": "A parameter out of range (`INVALID_QUERY`)." },
  );
}

/** ComfyUI's asset API: the same operations with and without the /api prefix. */
export function registerAssetRoutes(registry: OpenAPIRegistry, prefix: string, suffix: string): void {
  registerByHash(registry, prefix, suffix);
  registerUnsupported(registry, prefix, suffix);
  registerCollection(registry, prefix, suffix);
  registerRecord(registry, prefix, suffix);
  registerTags(registry, prefix, suffix);
}
