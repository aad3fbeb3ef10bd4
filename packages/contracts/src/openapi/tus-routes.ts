import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { binary } from "./components.ts";
import { registerKeyed, type AssetOperation } from "./asset-routes.ts";
import { param } from "./parameters.ts";

const uploadId = z.object({
  uploadId: param(z.string().regex(/^[0-9a-f]{32}$/), "The upload's id, the last segment of the `Location` its creation answered."),
});
const tusResumable = { "Tus-Resumable": param(z.literal("1.0.0"), "The protocol version: `1.0.0`.") };
const bytes = { "application/offset+octet-stream": { schema: binary() } };

const offsetHeader = { "Upload-Offset": { description: "Bytes stored so far.", schema: { type: "integer" as const, minimum: 0 } } };
const assetIdHeader = {
  "Asset-Id": {
    description: "The asset made when the last byte landed (its record: `GET /api/assets/{id}`).",
    schema: { type: "string" as const, format: "uuid" },
  },
};
const expiresHeader = {
  "Upload-Expires": {
    description: "When an unfinished upload is removed (TUS_EXPIRY after its creation), RFC 7231 date.",
    schema: { type: "string" as const },
  },
};

const metadataDescription =
  "tus `Upload-Metadata`: comma-separated `key base64(value)` pairs. `filename` (required: the asset's name), `tags` (comma-separated, e.g. `models,model_type:checkpoints`; new bytes need exactly one of input, output, models, and models one `model_type:<category>`), optional `mime_type` (used only when the bytes say nothing), `user_metadata` (a JSON object) and `hash` (`blake3:<hex>`, checked when the last byte lands). Other keys (Uppy's `name`, `type`, `filetype`, `relativePath`) are ignored.";

const unknownUpload = {
  "404": "No upload of this key's owner has this id (`NOT_FOUND`): never made, terminated, swept, or another owner's.",
};

/** A tus operation: keyed like every asset route, and a wrong `Tus-Resumable` is the tus server's 412. */
function registerTus(
  registry: OpenAPIRegistry,
  method: "post" | "head" | "patch" | "delete",
  path: string,
  operationId: string,
  op: AssetOperation,
  errors: Record<string, string>,
): void {
  const precondition = { "412": { description: "No or another `Tus-Resumable` version (plain text, from the tus server)." } };
  registerKeyed(registry, method, path, operationId, { ...op, responses: { ...op.responses, ...precondition } }, errors);
}

function registerCreation(registry: OpenAPIRegistry, path: string, suffix: string): void {
  const headers = z.object({
    ...tusResumable,
    "Upload-Length": param(
      z.number().int().min(1),
      "The whole upload's size in bytes (at most ASSET_UPLOAD_MAX_BYTES; Upload-Defer-Length is not supported).",
    ),
    "Upload-Metadata": param(z.string(), metadataDescription),
  });
  registerTus(
    registry,
    "post",
    path,
    `CreateTusUpload${suffix}`,
    {
      summary:
        "Create a resumable upload (tus creation; with `Content-Type: application/offset+octet-stream` its first bytes may come in the same request).",
      request: { headers, body: { required: false, content: bytes } },
      responses: {
        "201": {
          description:
            "Created: `Location` is the upload's URL (relative, under the prefix used). With a body, `Upload-Offset` says how much was stored, and `Asset-Id` is set when that was all of it.",
          headers: { Location: { schema: { type: "string" } }, ...offsetHeader, ...expiresHeader, ...assetIdHeader },
        },
      },
    },
    {
      "400":
        "Bad `Upload-Metadata`: `INVALID_BODY` (a missing `filename` or `tags`, bad `user_metadata`, no destination tag; the message names it), `INVALID_HASH`, `EMPTY_UPLOAD` (Upload-Length 0); or a malformed tus header (plain text).",
      "413":
        "Upload-Length over ASSET_UPLOAD_MAX_BYTES (plain text), or the body over the key's upload bytes per minute (`PAYLOAD_TOO_LARGE`).",
    },
  );
}

function registerUpload(registry: OpenAPIRegistry, path: string, suffix: string): void {
  const resumable = z.object(tusResumable);
  registerTus(
    registry,
    "head",
    path,
    `GetTusUploadOffset${suffix}`,
    {
      summary: "Where to resume: the stored offset (and, once finished, the asset it made).",
      request: { params: uploadId, headers: resumable },
      responses: {
        "200": {
          description: "The upload's state (`Cache-Control: no-store`).",
          headers: {
            ...offsetHeader,
            "Upload-Length": { schema: { type: "integer" } },
            "Upload-Metadata": { schema: { type: "string" } },
            ...assetIdHeader,
          },
        },
      },
    },
    { ...unknownUpload, "410": "Expired (plain text)." },
  );
  registerTus(
    registry,
    "patch",
    path,
    `PatchTusUpload${suffix}`,
    {
      summary:
        "Append bytes at `Upload-Offset`. The last byte makes the asset exactly as `POST /api/assets` would; the answer then carries `Asset-Id`. A body that stalls for BODY_TIMEOUT_MS is cut; what arrived stays, and the client resumes from it.",
      request: {
        params: uploadId,
        headers: resumable.extend({ "Upload-Offset": param(z.number().int().min(0), "Must equal the stored offset.") }),
        body: { required: true, content: bytes },
      },
      responses: {
        "204": {
          description: "Stored; `Upload-Offset` is the new offset, `Asset-Id` set when it was the last byte.",
          headers: { ...offsetHeader, ...expiresHeader, ...assetIdHeader },
        },
      },
    },
    {
      "400":
        "When the last byte landed: `HASH_MISMATCH` (the metadata's hash is not the bytes'), `INVALID_BODY`; the upload is then removed.",
      "404": "No upload of this key's owner has this id (`NOT_FOUND`).",
      "409": "`Upload-Offset` is not the stored offset (plain text).",
      "410": "Expired (plain text).",
      "413": "More bytes than Upload-Length (plain text), or over the key's upload bytes per minute (`PAYLOAD_TOO_LARGE`).",
      "415": "Not `application/offset+octet-stream` (plain text).",
    },
  );
  registerTus(
    registry,
    "delete",
    path,
    `TerminateTusUpload${suffix}`,
    {
      summary: "Terminate: the upload and every byte it holds are removed (an asset it made stays).",
      request: { params: uploadId, headers: resumable },
      responses: { "204": { description: "Removed." } },
    },
    { "404": "No upload of this key's owner has this id (`NOT_FOUND`)." },
  );
}

/** The tus server's capabilities: no key needed. */
function registerOptions(registry: OpenAPIRegistry, path: string, operationId: string, params?: z.ZodObject): void {
  registry.registerPath({
    method: "options",
    path,
    operationId,
    tags: ["Assets"],
    summary: "The tus server's capabilities (`Tus-Version`, `Tus-Extension`, `Tus-Max-Size`); no key needed.",
    request: params ? { params } : undefined,
    responses: { "204": { description: "Capabilities in the headers." } },
  });
}

/** tus 1.0.0 (Core, creation, creation-with-upload, termination, expiration) under the asset API's paths. */
export function registerTusRoutes(registry: OpenAPIRegistry, prefix: string, suffix: string): void {
  registerOptions(registry, `${prefix}/assets/uploads`, `TusUploadsOptions${suffix}`);
  registerCreation(registry, `${prefix}/assets/uploads`, suffix);
  registerOptions(registry, `${prefix}/assets/uploads/{uploadId}`, `TusUploadOptions${suffix}`, uploadId);
  registerUpload(registry, `${prefix}/assets/uploads/{uploadId}`, suffix);
}
