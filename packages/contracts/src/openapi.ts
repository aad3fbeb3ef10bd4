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
import { AlterList, ChannelExtras, CustomNodeList, ExtensionNodeMap, GithubStats, ModelList } from "./channel.ts";
import { UploadImageForm, UploadMaskForm, ViewQuery } from "./forms.ts";
import { ComfyNodesPage, ErrorResponse, Node, NodeVersion, Publisher, SearchPage } from "./registry.ts";
import { AllVersionsQueryWire, BulkNodeVersionsRequest, BulkNodeVersionsResponse, ComfyNodesQueryWire, InstallQueryWire, NodeVersionsQueryWire, VersionsPage } from "./registry-reads.ts";
import { SearchQueryWire } from "./search-query.ts";
import { MaskUploadResult, UploadError, UploadResult } from "./upload.ts";

/**
 * The OpenAPI 3.1 document of every public route, generated from the zod schemas above so
 * it cannot drift from what the services validate and answer.
 */
const components = z.registry<{ id: string }>();
const named = {
  Node,
  NodeVersion,
  Publisher,
  SearchPage,
  ComfyNodesPage,
  VersionsPage,
  BulkNodeVersionsResponse,
  CustomNodeList,
  ExtensionNodeMap,
  GithubStats,
  ModelList,
  AlterList,
  ChannelExtras,
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
const jsonArray = (id: keyof typeof named, description: string) => ({ description, content: { "application/json": { schema: { type: "array", items: ref(id) } } } });

function toSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

/** ComfyUI-Manager's channel files (set its channel URL to `<base>/channel`). */
function channelPaths() {
  const file = (operationId: string, schema: keyof typeof named, summary: string) => ({
    get: { operationId, tags: ["Channel"], summary, responses: { "200": json(schema, summary) } },
  });
  return {
    "/channel/custom-node-list.json": file("ChannelCustomNodeList", "CustomNodeList", "Every pack not banned, as a git-clone entry of ComfyUI-Manager's list"),
    "/channel/extension-node-map.json": file("ChannelExtensionNodeMap", "ExtensionNodeMap", "Repository URL → [the pack's node classes, {title_aux, preemptions}]: Manager's missing-node mapping"),
    "/channel/github-stats.json": file("ChannelGithubStats", "GithubStats", "Repository URL → {stars, last_update, author_account_age_days} for every pack not banned"),
    "/channel/model-list.json": file("ChannelModelList", "ModelList", "No models: `{models: []}`"),
    "/channel/alter-list.json": file("ChannelAlterList", "AlterList", "No alternatives: `{items: []}`"),
    "/channel/extras.json": file("ChannelExtras", "ChannelExtras", "No favourites: `{favorites: []}`"),
  };
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
    node_id: "Only these packs (repeat the parameter: `node_id=a&node_id=b`), under every other parameter. At most 500. Without `limit`, the page holds as many as were asked.",
    latest: "Accepted for the registry's clients; this service has no list cache to bypass.",
    comfyui_version: "Accepted (ComfyUI-Manager sends it on every list page); every pack is answered either way.",
    form_factor: "Accepted (ComfyUI-Manager sends it on every list page); every pack is answered either way.",
  }),
  { name: "comfy_node_search", in: "query", required: false, schema: { type: "string", maxLength: 512 }, description: "The public registry's name for `app_node_search`." },
];

const registryErrors = {
  "400": json("ErrorResponse", "Invalid input; the message names the parameter and why."),
  "500": json("ErrorResponse", "Internal server error."),
};

const nodeIdParam = { name: "nodeId", in: "path", required: true, schema: { type: "string" }, description: "The node's id; in other capitals the answer is a 302 to the canonical id." };
const versionParam = (description: string) => ({ name: "version", in: "path", required: true, schema: { type: "string" }, description });
const publisherIdParam = { name: "publisherId", in: "path", required: true, schema: { type: "string" } };
const redirect = { description: "The id differs from a node's only by case: `Location` is the same URL with the node's id.", headers: { Location: { schema: { type: "string" } } } };

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
    description: "The registry's `sort` and `timestamp` are refused with 400 (`invalid_parameter`): the order here is relevance, then popularity, then id, and the catalog keeps no per-pack update times.",
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

/** tus 1.0.0's headers, as parameters and response headers of the resumable upload routes. */
const tusHeader = (name: string, description: string, required = true, schema: Record<string, unknown> = { type: "string" }) => ({ name, in: "header", required, schema, description });
const tusResumable = tusHeader("Tus-Resumable", "The protocol version: `1.0.0`.", true, { type: "string", const: "1.0.0" });
const uploadIdParam = { name: "uploadId", in: "path", required: true, schema: { type: "string", pattern: "^[0-9a-f]{32}$" }, description: "The upload's id, the last segment of the `Location` its creation answered." };
const offsetHeader = { "Upload-Offset": { description: "Bytes stored so far.", schema: { type: "integer", minimum: 0 } } };
const assetIdHeader = { "Asset-Id": { description: "The asset made when the last byte landed (its record: `GET /api/assets/{id}`).", schema: { type: "string", format: "uuid" } } };
const expiresHeader = { "Upload-Expires": { description: "When an unfinished upload is removed (TUS_EXPIRY after its creation), RFC 7231 date.", schema: { type: "string" } } };
const tusErrors = (statuses: Record<string, string>) => ({
  ...assetErrors({ "401": "Missing or unknown API key (`UNAUTHORIZED`).", ...statuses }),
  "412": { description: "No or another `Tus-Resumable` version (plain text, from the tus server)." },
  ...assetRateLimited,
});
const tusMetadataDescription =
  "tus `Upload-Metadata`: comma-separated `key base64(value)` pairs. `filename` (required: the asset's name), `tags` (comma-separated, e.g. `models,model_type:checkpoints`; new bytes need exactly one of input, output, models, and models one `model_type:<category>`), optional `mime_type` (used only when the bytes say nothing), `user_metadata` (a JSON object) and `hash` (`blake3:<hex>`, checked when the last byte lands). Other keys (Uppy's `name`, `type`, `filetype`, `relativePath`) are ignored.";

/** tus 1.0.0 (Core, creation, creation-with-upload, termination, expiration) under the asset API's paths. */
function tusPaths(prefix: string, suffix: string): Record<string, unknown> {
  const options = {
    operationId: "",
    tags: ["Assets"],
    summary: "The tus server's capabilities (`Tus-Version`, `Tus-Extension`, `Tus-Max-Size`); no key needed.",
    responses: { "204": { description: "Capabilities in the headers." } },
  };
  return {
    [`${prefix}/assets/uploads`]: {
      options: { ...options, operationId: `TusUploadsOptions${suffix}` },
      post: {
        operationId: `CreateTusUpload${suffix}`,
        tags: ["Assets"],
        security,
        summary: "Create a resumable upload (tus creation; with `Content-Type: application/offset+octet-stream` its first bytes may come in the same request).",
        parameters: [
          tusResumable,
          tusHeader("Upload-Length", "The whole upload's size in bytes (at most ASSET_UPLOAD_MAX_BYTES; Upload-Defer-Length is not supported).", true, { type: "integer", minimum: 1 }),
          tusHeader("Upload-Metadata", tusMetadataDescription),
        ],
        requestBody: { required: false, content: { "application/offset+octet-stream": { schema: { type: "string", contentMediaType: "application/octet-stream" } } } },
        responses: {
          "201": {
            description: "Created: `Location` is the upload's URL (relative, under the prefix used). With a body, `Upload-Offset` says how much was stored, and `Asset-Id` is set when that was all of it.",
            headers: { Location: { schema: { type: "string" } }, ...offsetHeader, ...expiresHeader, ...assetIdHeader },
          },
          ...tusErrors({
            "400": "Bad `Upload-Metadata`: `INVALID_BODY` (a missing `filename` or `tags`, bad `user_metadata`, no destination tag; the message names it), `INVALID_HASH`, `EMPTY_UPLOAD` (Upload-Length 0); or a malformed tus header (plain text).",
            "413": "Upload-Length over ASSET_UPLOAD_MAX_BYTES (plain text), or the body over the key's upload bytes per minute (`PAYLOAD_TOO_LARGE`).",
          }),
        },
      },
    },
    [`${prefix}/assets/uploads/{uploadId}`]: {
      options: { ...options, operationId: `TusUploadOptions${suffix}`, parameters: [uploadIdParam] },
      head: {
        operationId: `GetTusUploadOffset${suffix}`,
        tags: ["Assets"],
        security,
        summary: "Where to resume: the stored offset (and, once finished, the asset it made).",
        parameters: [uploadIdParam, tusResumable],
        responses: {
          "200": { description: "The upload's state (`Cache-Control: no-store`).", headers: { ...offsetHeader, "Upload-Length": { schema: { type: "integer" } }, "Upload-Metadata": { schema: { type: "string" } }, ...assetIdHeader } },
          ...tusErrors({ "404": "No upload of this key's owner has this id (`NOT_FOUND`): never made, terminated, swept, or another owner's.", "410": "Expired (plain text)." }),
        },
      },
      patch: {
        operationId: `PatchTusUpload${suffix}`,
        tags: ["Assets"],
        security,
        summary: "Append bytes at `Upload-Offset`. The last byte makes the asset exactly as `POST /api/assets` would; the answer then carries `Asset-Id`. A body that stalls for BODY_TIMEOUT_MS is cut; what arrived stays, and the client resumes from it.",
        parameters: [uploadIdParam, tusResumable, tusHeader("Upload-Offset", "Must equal the stored offset.", true, { type: "integer", minimum: 0 })],
        requestBody: { required: true, content: { "application/offset+octet-stream": { schema: { type: "string", contentMediaType: "application/octet-stream" } } } },
        responses: {
          "204": { description: "Stored; `Upload-Offset` is the new offset, `Asset-Id` set when it was the last byte.", headers: { ...offsetHeader, ...expiresHeader, ...assetIdHeader } },
          ...tusErrors({
            "400": "When the last byte landed: `HASH_MISMATCH` (the metadata's hash is not the bytes'), `INVALID_BODY`; the upload is then removed.",
            "404": "No upload of this key's owner has this id (`NOT_FOUND`).",
            "409": "`Upload-Offset` is not the stored offset (plain text).",
            "410": "Expired (plain text).",
            "413": "More bytes than Upload-Length (plain text), or over the key's upload bytes per minute (`PAYLOAD_TOO_LARGE`).",
            "415": "Not `application/offset+octet-stream` (plain text).",
          }),
        },
      },
      delete: {
        operationId: `TerminateTusUpload${suffix}`,
        tags: ["Assets"],
        security,
        summary: "Terminate: the upload and every byte it holds are removed (an asset it made stays).",
        parameters: [uploadIdParam, tusResumable],
        responses: { "204": { description: "Removed." }, ...tusErrors({ "404": "No upload of this key's owner has this id (`NOT_FOUND`)." }) },
      },
    },
  };
}

/** ComfyUI's asset API: the same operations with and without the /api prefix. */
function assetPaths(prefix: string, suffix: string): Record<string, unknown> {
  const bodyErrors = { "400": "Bad JSON (`INVALID_JSON`) or a field that does not validate (`INVALID_BODY`, the message names it).", "413": "JSON body over 64 KiB.", "408": "The body did not arrive within BODY_TIMEOUT_MS (`REQUEST_TIMEOUT`); the connection is closed." };
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
        { "400": "A parameter out of range or malformed (`INVALID_QUERY`), tag filters that contradict or name over 100 distinct tags (`INVALID_TAG_FILTER`, `details.parameter` naming it), or a cursor that is not this sort's (`INVALID_CURSOR`)." },
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
          responses: { "200": json("Node", "The node, with `latest_version` the install-path version (none when no version is active, flagged or pending)."), "302": redirect, "403": json("ErrorResponse", "The node is banned (without include_banned=true): `message` is \"Node Banned\", as the registry answers."), "404": json("ErrorResponse", "Unknown or deleted node."), ...registryErrors },
        },
      },
      "/nodes/{nodeId}/versions/{version}/comfy-nodes": {
        get: {
          operationId: "ListComfyNodes",
          tags: ["Registry"],
          summary: "The node classes of a version with their whole definitions, paged (the install path's mirrored; another version's read through from the registry and kept)",
          parameters: [nodeIdParam, versionParam("The version the catalog holds the classes of (the install-path version unless the catalog says), or `latest`."), ...queryParameters(ComfyNodesQueryWire)],
          responses: { "200": json("ComfyNodesPage", "A page of node classes."), "302": redirect, "403": json("ErrorResponse", "The node is banned (without include_banned=true)."), "404": json("ErrorResponse", "Unknown node or version, or a version the registry holds no classes for."), "503": json("ErrorResponse", "Another version's classes, not yet kept here, and the registry cannot be reached."), ...registryErrors },
        },
      },
      "/nodes/{nodeId}/install": {
        get: {
          operationId: "InstallNode",
          tags: ["Registry"],
          summary: "The version to install: the install-path version, or the one asked (whatever its status)",
          parameters: [nodeIdParam, ...queryParameters(InstallQueryWire)],
          responses: { "200": json("NodeVersion", "The version, with its `downloadUrl`."), "302": redirect, "403": json("ErrorResponse", "The node is banned (`message`: \"Node Banned\")."), "404": json("ErrorResponse", "Unknown or deleted node, or no such version (or none installable) in the catalog."), ...registryErrors },
        },
      },
      "/nodes/{nodeId}/versions": {
        get: {
          operationId: "ListNodeVersions",
          tags: ["Registry"],
          summary: "Every version the catalog knows of a node, newest first",
          parameters: [nodeIdParam, ...queryParameters(NodeVersionsQueryWire, { statuses: "Repeatable (`statuses=A&statuses=B`); absent = every status.", include_status_reason: "Answer `status_reason` too." })],
          responses: { "200": jsonArray("NodeVersion", "The versions."), "302": redirect, "403": json("ErrorResponse", "The node is banned (`message`: \"Node Banned\")."), "404": json("ErrorResponse", "Unknown or deleted node."), ...registryErrors },
        },
      },
      "/nodes/{nodeId}/versions/{version}": {
        get: {
          operationId: "GetNodeVersion",
          tags: ["Registry"],
          parameters: [nodeIdParam, versionParam("The version's number (not a UUID), or `latest` for the install-path version.")],
          responses: { "200": json("NodeVersion", "The version."), "302": redirect, "403": json("ErrorResponse", "The node is banned (`message`: \"Node Banned\")."), "404": json("ErrorResponse", "Unknown node or version."), ...registryErrors },
        },
      },
      "/archives/{nodeId}/{version}/node.zip": {
        get: {
          operationId: "GetNodeArchive",
          tags: ["Registry"],
          summary: "A version's archive (what every answered version's `downloadUrl` names unless MIRROR_ARCHIVES=off): from the store, or fetched from upstream's storage, stored and streamed at once",
          description: "HEAD answers the same headers. A stored archive carries `ETag` (its blake3), `Repr-Digest: sha-256=:<base64>:` of the whole archive (recorded when it was stored), `Accept-Ranges: bytes`; one byte range answers 206, an unsatisfiable one 416; `If-None-Match` 304.",
          parameters: [nodeIdParam, versionParam("The version's number.")],
          responses: {
            "200": { description: "The zip archive.", content: { "application/zip": { schema: { type: "string", contentMediaType: "application/zip" } } } },
            "206": { description: "One byte range of the archive." },
            "302": redirect,
            "304": { description: "Not modified (If-None-Match)." },
            "403": json("ErrorResponse", "The node or this version is banned: its archive is never served."),
            "404": json("ErrorResponse", "Unknown node or version; or upstream publishes no archive for it; or it is not stored and MIRROR_ARCHIVES=off."),
            "416": { description: "The range lies outside the archive." },
            "503": json("ErrorResponse", "Not stored yet, and upstream's storage cannot be reached or did not answer within ARCHIVE_TIMEOUT_MS (`error: archive_unavailable`, the message names the version)."),
            ...registryErrors,
          },
        },
      },
      "/versions": {
        get: {
          operationId: "ListAllNodeVersions",
          tags: ["Registry"],
          summary: "Every version of every pack not banned, newest first, paged",
          parameters: queryParameters(AllVersionsQueryWire, { statuses: "Repeatable; absent = every status.", status_reason: "A case-insensitive substring of `status_reason`." }),
          responses: { "200": json("VersionsPage", "A page of versions."), "403": json("ErrorResponse", "`nodeId` names a banned node."), ...registryErrors },
        },
      },
      "/bulk/nodes/versions": {
        post: {
          operationId: "GetBulkNodeVersions",
          tags: ["Registry"],
          summary: "Many node versions at once, each `success` or `not_found`, in the order asked",
          requestBody: jsonBody(BulkNodeVersionsRequest),
          responses: { "200": json("BulkNodeVersionsResponse", "One result per identifier."), "413": json("ErrorResponse", "A body over 256 KiB."), ...registryErrors },
        },
      },
      "/comfy-nodes/{comfyNodeName}/node": {
        get: {
          operationId: "GetNodeByComfyNodeName",
          tags: ["Registry"],
          summary: "The pack that provides a node class: one that preempts the name first, then the lower search_ranking, then more downloads",
          parameters: [{ name: "comfyNodeName", in: "path", required: true, schema: { type: "string" } }],
          responses: { "200": json("Node", "The pack."), "404": json("ErrorResponse", "No pack provides that class."), ...registryErrors },
        },
      },
      "/publishers/{publisherId}": {
        get: {
          operationId: "GetPublisher",
          tags: ["Registry"],
          summary: "A publisher, as its packs embed it",
          parameters: [publisherIdParam],
          responses: { "200": json("Publisher", "The publisher."), "404": json("ErrorResponse", "No pack of this publisher in the catalog."), ...registryErrors },
        },
      },
      "/publishers/{publisherId}/nodes": {
        get: {
          operationId: "ListNodesForPublisher",
          tags: ["Registry"],
          parameters: [publisherIdParam, { name: "include_banned", in: "query", required: false, schema: { type: "boolean" } }],
          responses: { "200": jsonArray("Node", "The publisher's packs, most popular first (empty for an unknown publisher)."), ...registryErrors },
        },
      },
      ...channelPaths(),
      "/api/upload/image": uploadOperation("UploadImage", UploadImageForm, "UploadResult", {}),
      "/upload/image": uploadOperation("UploadImageComfy", UploadImageForm, "UploadResult", {}),
      "/api/upload/mask": uploadOperation("UploadMask", UploadMaskForm, "MaskUploadResult", maskErrors),
      "/upload/mask": uploadOperation("UploadMaskComfy", UploadMaskForm, "MaskUploadResult", maskErrors),
      "/api/view": viewOperation("ViewAsset"),
      "/view": viewOperation("ViewAssetComfy"),
      ...assetPaths("/api", ""),
      ...tusPaths("/api", ""),
      ...assetPaths("", "Comfy"),
      ...tusPaths("", "Comfy"),
      "/healthz": { get: { operationId: "Health", tags: ["Operations"], responses: { "200": { description: "The process lives." } } } },
      "/readyz": { get: { operationId: "Ready", tags: ["Operations"], responses: { "200": { description: "This gateway can serve: every service mounted in it is ready (the catalog indexed, the store and queue reachable). `services` reports each service, proxied ones included; a proxied service that is down does not make the gateway unready. With search mounted in this process (and on the search service's own `/readyz`), `catalog` says what is served: `{state: fresh|stale|empty, source, indexedAt, nodes, lastError}` (`source`: where the catalog served came from; `readingFrom`: the configured source when that differs, after a restart from a snapshot), `nextTry` after a failed read (`{at, retrying, failedTries}`: when it is read again, null at when not before a restart; `retrying` false once a refresh's tries are used up), and for a registry source `mirror` (the current or last pass: `pass` full|incremental, `phase` listing|details|done|failed, `packs {read, total}`, `versions {done, of}` (packs whose versions were read, of those to read), `classes` (of those, packs whose install-path class list is known), `errors`, `requests`) and `missing` (`{count, kept, at}`: packs the registry counts that its list did not return, `kept` served from the previous catalog; null when none); the service is ready while a registry is still being mirrored." }, "503": { description: "A service mounted in this process is not ready yet." } } } },
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
