import { z } from "zod";
import {
  Asset,
  AssetCreated,
  AssetError,
  TagHistogram,
  TagsRefineQuery,
  AssetsList,
  CreateFromHashBody,
  ListAssetsQuery,
  TagsAdded,
  TagsBody,
  TagsList,
  TagsListQuery,
  TagsRemoved,
  UpdateAssetBody,
} from "./assets.ts";
import { UploadImageForm, UploadMaskForm, ViewQuery } from "./forms.ts";
import { ComfyNodesPage, ErrorResponse, Node, SearchPage } from "./registry.ts";
import { SearchQueryWire } from "./search-query.ts";
import { MaskUploadResult, UploadError, UploadResult } from "./upload.ts";

/**
 * The OpenAPI 3.1 document of every public route, generated from the zod schemas above so
 * it cannot drift from what the services validate and answer.
 */
const components = z.registry<{ id: string }>();
const named = {
  Node,
  SearchPage,
  ComfyNodesPage,
  ErrorResponse,
  UploadResult,
  MaskUploadResult,
  UploadError,
  Asset,
  AssetCreated,
  AssetsList,
  TagsList,
  TagsAdded,
  TagsRemoved,
  TagHistogram,
  AssetError,
} as const;
for (const [id, schema] of Object.entries(named)) components.add(schema, { id });

const ref = (id: keyof typeof named) => ({ $ref: `#/components/schemas/${id}` });
const json = (id: keyof typeof named, description: string) => ({ description, content: { "application/json": { schema: ref(id) } } });

function toSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

function queryParameters(schema: z.ZodObject, extra: Record<string, string> = {}) {
  const js = toSchema(schema) as { properties: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(js.properties).map(([name, s]) => ({
    name,
    in: "query",
    required: js.required?.includes(name) ?? false,
    schema: s,
    ...(extra[name] ? { description: extra[name] } : {}),
  }));
}

const searchParameters = [
  ...queryParameters(SearchQueryWire, {
    search: "Keywords: tokenised, accent- and case-insensitive, typo-tolerant, the last token matches as a prefix; results ranked by relevance, then popularity.",
    repository_url_search: "A repository URL, `owner/repo` or a fragment; scheme, `www.`, case, trailing `/` and `.git` are ignored.",
    app_node_search: "An application node class name; whole-name matches rank above partial ones.",
    supported_os: "A ` :: `-separated path (e.g. `Windows`, `Microsoft :: Windows`, `POSIX :: Linux`).",
    supported_accelerator: "A ` :: `-separated path (e.g. `CUDA`, `GPU :: NVIDIA CUDA`, `ROCm`, `Metal`, `DirectML`, `CPU`).",
    include_banned: "Include banned nodes (deleted nodes are never returned).",
  }),
  { name: "comfy_node_search", in: "query", required: false, schema: { type: "string", maxLength: 512 }, description: "The public registry's name for `app_node_search`." },
];

const registryErrors = {
  "400": json("ErrorResponse", "Invalid input; the message names the parameter and why."),
  "500": json("ErrorResponse", "Internal server error."),
};

const uploadErrors = (statuses: Record<string, string>) =>
  Object.fromEntries(Object.entries(statuses).map(([status, description]) => [status, json("UploadError", description)]));

const security = [{ apiKey: [] }, { bearer: [] }];

/** Every keyed route can answer this: the key's per-minute allowance is spent. */
export const rateLimitedResponse = {
  "429": {
    ...json("UploadError", "The key's limit for this minute is reached (`rate_limited`): requests per minute, or upload bytes per minute on upload routes."),
    headers: {
      "Retry-After": { description: "Seconds until the key's window ends.", schema: { type: "integer", minimum: 1 } },
    },
  },
};

const searchOperation = (operationId: string, summary: string) => ({
  get: {
    operationId,
    tags: ["Registry"],
    summary,
    parameters: searchParameters,
    responses: { "200": json("SearchPage", "A page of nodes."), ...registryErrors },
  },
});

const uploadOperation = (operationId: string, form: z.ZodObject, result: "UploadResult" | "MaskUploadResult", extraErrors: Record<string, string>) => ({
  post: {
    operationId,
    tags: ["Upload"],
    security,
    requestBody: { required: true, content: { "multipart/form-data": { schema: toSchema(form) } } },
    responses: {
      "200": json(result, "Stored (or already stored: identical content, same name)."),
      ...uploadErrors({
        "400": "Bad input: missing image part, not an image, too many pixels, bad subfolder, malformed multipart.",
        "401": "Missing or unknown API key.",
        "413": "Body over the upload size limit, or over the key's whole upload bytes per minute; nothing stored.",
        ...extraErrors,
      }),
      ...rateLimitedResponse,
    },
  },
});

const viewOperation = (operationId: string) => ({
  get: {
    operationId,
    tags: ["Upload"],
    security,
    parameters: queryParameters(ViewQuery),
    responses: {
      "200": { description: "The bytes, with ETag = the hash and an immutable Cache-Control.", content: { "image/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } } } },
      "206": { description: "The requested byte range." },
      "304": { description: "Not modified (If-None-Match matched the ETag)." },
      ...uploadErrors({ "400": "A filename that is not a stored asset's name.", "401": "Missing or unknown API key.", "404": "No such asset.", "416": "Unsatisfiable range." }),
      ...rateLimitedResponse,
    },
  },
});

const jsonBody = (schema: z.ZodType) => ({ required: true, content: { "application/json": { schema: toSchema(schema) } } });
const assetId = { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" }, description: "The record's id (any case)." };
/** The asset routes answer every error in ComfyUI's envelope (`AssetError`), the 429 included. */
const assetErrors = (statuses: Record<string, string>) =>
  Object.fromEntries(Object.entries(statuses).map(([status, description]) => [status, json("AssetError", description)]));
const assetRateLimited = { "429": { ...json("AssetError", "The key's limit for this minute is reached (`RATE_LIMITED`)."), headers: rateLimitedResponse["429"].headers } };
const keyed = (operationId: string, extra: Record<string, unknown>, errors: Record<string, string>) => ({
  operationId,
  tags: ["Assets"],
  security,
  ...extra,
  responses: { ...(extra.responses as object), ...assetErrors({ "401": "Missing or unknown API key (`UNAUTHORIZED`).", ...errors }), ...assetRateLimited },
});

/** POST /api/assets' multipart form, as ComfyUI's UploadAssetSpec reads it. */
const uploadAssetForm = {
  type: "object",
  properties: {
    file: { type: "string", contentMediaType: "application/octet-stream", description: "The bytes (any type). Optional when `hash` names stored content." },
    tags: { type: "string", description: "A JSON array or comma-separated list; may be repeated. New bytes need exactly one of input, output, models (models: one `model_type:<category>`)." },
    name: { type: "string", maxLength: 512 },
    user_metadata: { type: "string", description: "A JSON object (at most 32 levels deep)." },
    hash: { type: "string", description: "`blake3:<hex>`: sent before `file` and naming stored content, the file is not stored (the shortcut); otherwise it must be the file's hash." },
    mime_type: { type: "string", description: "Used only when the bytes say nothing about their type." },
    preview_id: { type: "string", format: "uuid", description: "Another of the owner's records to show as this one's preview." },
  },
  required: ["tags"],
};

/** ComfyUI's asset API: the same operations with and without the /api prefix. */
function assetPaths(prefix: string, suffix: string): Record<string, unknown> {
  const bodyErrors = { "400": "Bad JSON (`INVALID_JSON`) or a field that does not validate (`INVALID_BODY`, the message names it).", "413": "JSON body over 64 KiB." };
  return {
    [`${prefix}/assets/hash/{hash}`]: {
      head: {
        operationId: `HeadAssetByHash${suffix}`,
        tags: ["Assets"],
        security,
        summary: "Whether bytes with this hash are stored (a stat of the store; the bytes are not read). No body.",
        parameters: [{ name: "hash", in: "path", required: true, schema: { type: "string", pattern: "^blake3:[0-9a-f]{64}$" } }],
        responses: {
          "200": { description: "Stored." },
          "400": { description: "Not `blake3:` followed by 64 lower-case hex digits." },
          "401": { description: "Missing or unknown API key." },
          "404": { description: "Not stored." },
          "429": { description: "The key's requests per minute are spent.", headers: rateLimitedResponse["429"].headers },
        },
      },
    },
    [`${prefix}/assets/from-hash`]: {
      post: keyed(
        `CreateAssetFromHash${suffix}`,
        { summary: "A new record for bytes already stored; no upload.", requestBody: jsonBody(CreateFromHashBody), responses: { "201": json("AssetCreated", "The new record.") } },
        { ...bodyErrors, "404": "No stored bytes have this hash (`ASSET_NOT_FOUND`)." },
      ),
    },
    [`${prefix}/assets/tags/refine`]: {
      get: keyed(
        `RefineAssetTags${suffix}`,
        { summary: "How many of the filtered records carry each tag.", parameters: queryParameters(TagsRefineQuery), responses: { "200": json("TagHistogram", "Tag counts.") } },
        { "400": "A parameter out of range or malformed (`INVALID_QUERY`), or tag filters that contradict (`INVALID_TAG_FILTER`)." },
      ),
    },
    [`${prefix}/assets/seed`]: {
      post: keyed(`SeedAssets${suffix}`, { summary: "ComfyUI's scan of its own folders: this service has none.", responses: {} }, { "501": "Not supported (`NOT_SUPPORTED`)." }),
    },
    [`${prefix}/assets/prune`]: {
      post: keyed(`PruneAssets${suffix}`, { summary: "ComfyUI's pruning of files on disk: this service has none.", responses: {} }, { "501": "Not supported (`NOT_SUPPORTED`)." }),
    },
    [`${prefix}/assets`]: {
      post: keyed(
        `UploadAsset${suffix}`,
        {
          summary: "Upload any asset (multipart, streamed and hashed, never buffered whole), or record stored content by its hash.",
          requestBody: { required: true, content: { "multipart/form-data": { schema: uploadAssetForm } } },
          responses: { "201": json("AssetCreated", "New bytes stored, and their record."), "200": json("AssetCreated", "The bytes were known: only a record was added (`created_new: false`).") },
        },
        {
          "400": "`EMPTY_UPLOAD`, `MISSING_FILE` (no file and no known hash), `INVALID_HASH`, `HASH_MISMATCH`, `INVALID_BODY` (a field; the message names it), `MALFORMED_MULTIPART`.",
          "404": "A hash-only upload whose bytes went between the check and the record (`ASSET_NOT_FOUND`).",
          "408": "The body stalled for BODY_TIMEOUT_MS (`REQUEST_TIMEOUT`).",
          "413": "Over ASSET_UPLOAD_MAX_BYTES (`PAYLOAD_TOO_LARGE`); nothing stored.",
          "415": "Not multipart (`UNSUPPORTED_MEDIA_TYPE`).",
        },
      ),
      get: keyed(
        `ListAssets${suffix}`,
        { summary: "The key's owner's records, filtered by tags, name and user_metadata, sorted, paged by offset or by cursor.", parameters: queryParameters(ListAssetsQuery), responses: { "200": json("AssetsList", "A page of records.") } },
        { "400": "A parameter out of range or malformed (`INVALID_QUERY`), tag filters that contradict or name over 64 tags (`INVALID_TAG_FILTER`), or a cursor that is not this sort's (`INVALID_CURSOR`)." },
      ),
    },
    [`${prefix}/assets/{id}`]: {
      get: keyed(`GetAsset${suffix}`, { parameters: [assetId], responses: { "200": json("Asset", "The record.") } }, { "404": "No such record." }),
      put: keyed(
        `UpdateAsset${suffix}`,
        { summary: "Rename, retag, replace user_metadata, or set or clear (null) preview_id.", parameters: [assetId], requestBody: jsonBody(UpdateAssetBody), responses: { "200": json("Asset", "The updated record.") } },
        { ...bodyErrors, "404": "No such record." },
      ),
      delete: keyed(
        `DeleteAsset${suffix}`,
        { summary: "Delete the record; the bytes stay (content is shared and kept, as ComfyUI keeps it).", parameters: [assetId], responses: { "204": { description: "Deleted." } } },
        { "404": "No such record." },
      ),
    },
    [`${prefix}/assets/{id}/content`]: {
      get: keyed(
        `GetAssetContent${suffix}`,
        {
          summary: "The bytes, under /api/view's caching and Range rules.",
          parameters: [assetId, { name: "disposition", in: "query", required: false, schema: { type: "string", enum: ["attachment", "inline"] } }],
          responses: {
            "200": { description: "The bytes (ETag = the hash, immutable Cache-Control).", content: { "application/octet-stream": { schema: { type: "string", contentMediaType: "application/octet-stream" } } } },
            "206": { description: "The requested byte range." },
            "302": { description: "Redirect to a presigned URL (S3 store with S3_VIEW_MODE=redirect)." },
            "304": { description: "Not modified (If-None-Match matched the ETag)." },
          },
        },
        { "404": "No such record.", "416": "Unsatisfiable range." },
      ),
    },
    [`${prefix}/assets/{id}/tags`]: {
      post: keyed(`AddAssetTags${suffix}`, { parameters: [assetId], requestBody: jsonBody(TagsBody), responses: { "200": json("TagsAdded", "Which tags were added.") } }, { ...bodyErrors, "404": "No such record." }),
      delete: keyed(`RemoveAssetTags${suffix}`, { parameters: [assetId], requestBody: jsonBody(TagsBody), responses: { "200": json("TagsRemoved", "Which tags were removed.") } }, { ...bodyErrors, "404": "No such record." }),
    },
    [`${prefix}/tags`]: {
      get: keyed(`ListTags${suffix}`, { summary: "Tags with how many records carry each.", parameters: queryParameters(TagsListQuery), responses: { "200": json("TagsList", "A page of tags.") } }, { "400": "A parameter out of range (`INVALID_QUERY`)." }),
    },
  };
}

const maskErrors = { "404": "The original image is unknown.", "503": "The derivative job did not finish in time or the queue is down; retrying is safe." };

export function buildOpenApiDocument(): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(components, {
    target: "draft-2020-12",
    io: "output",
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Record<string, unknown>> };
  for (const s of Object.values(schemas)) {
    delete s.$schema;
    delete s.$id;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Node registry search and asset uploads",
      version: "1.0",
      description: "Registry search (no credential) and content-addressed uploads (X-API-Key or Authorization: Bearer).",
    },
    paths: {
      "/nodes/search": searchOperation("SearchNodes", "Search nodes across all publishers"),
      "/nodes": searchOperation("ListAllNodes", "List nodes (same parameters and answers as /nodes/search)"),
      "/nodes/{nodeId}": {
        get: {
          operationId: "GetNode",
          tags: ["Registry"],
          parameters: [
            { name: "nodeId", in: "path", required: true, schema: { type: "string" } },
            { name: "include_banned", in: "query", required: false, schema: { type: "boolean" } },
          ],
          responses: { "200": json("Node", "The node."), "404": json("ErrorResponse", "Unknown or deleted node (or banned without include_banned)."), ...registryErrors },
        },
      },
      "/nodes/{nodeId}/versions/{version}/comfy-nodes": {
        get: {
          operationId: "ListComfyNodes",
          tags: ["Registry"],
          summary: "The node classes a node provides (the catalog knows its latest version's)",
          parameters: [
            { name: "nodeId", in: "path", required: true, schema: { type: "string" } },
            { name: "version", in: "path", required: true, schema: { type: "string" }, description: "The latest version's number, or `latest`." },
            { name: "include_banned", in: "query", required: false, schema: { type: "boolean" } },
          ],
          responses: { "200": json("ComfyNodesPage", "The node classes, on one page."), "404": json("ErrorResponse", "Unknown node, or a version other than the latest."), ...registryErrors },
        },
      },
      "/api/upload/image": uploadOperation("UploadImage", UploadImageForm, "UploadResult", {}),
      "/upload/image": uploadOperation("UploadImageComfy", UploadImageForm, "UploadResult", {}),
      "/api/upload/mask": uploadOperation("UploadMask", UploadMaskForm, "MaskUploadResult", maskErrors),
      "/upload/mask": uploadOperation("UploadMaskComfy", UploadMaskForm, "MaskUploadResult", maskErrors),
      "/api/view": viewOperation("ViewAsset"),
      "/view": viewOperation("ViewAssetComfy"),
      ...assetPaths("/api", ""),
      ...assetPaths("", "Comfy"),
      "/healthz": { get: { operationId: "Health", tags: ["Operations"], responses: { "200": { description: "The process lives." } } } },
      "/readyz": { get: { operationId: "Ready", tags: ["Operations"], responses: { "200": { description: "This gateway can serve: every service mounted in it is ready (the catalog indexed, the store and queue reachable). `services` reports each service, proxied ones included; a proxied service that is down does not make the gateway unready. With search mounted in this process (and on the search service's own `/readyz`), `catalog` says what is served: `{state: fresh|stale|empty, source, indexedAt, nodes, lastError}`; the service is ready while a registry is still being mirrored." }, "503": { description: "A service mounted in this process is not ready yet." } } } },
    },
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
        bearer: { type: "http", scheme: "bearer" },
      },
    },
  };
}
