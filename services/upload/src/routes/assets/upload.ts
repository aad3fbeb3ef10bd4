import type { Router } from "express";
import { MAX_TAGS_PER_ASSET, UploadAssetFields, type AssetCreated, type UploadAssetFields as Fields } from "@app/contracts";
import type { StagedBlob } from "@app/blobs";
import { probeContent } from "../../adapters/probes/content-probe.ts";
import { assetHashHex } from "../../domain/asset-hash.ts";
import { fileNames, toAsset, type PreviewUrls } from "../../domain/asset-view.ts";
import { ApiFailure } from "../../domain/errors.ts";
import { MODEL_FOLDERS } from "../../domain/model-folders.ts";
import { ownerOf } from "../../http/auth.ts";
import { describeIssue } from "../../http/json-body.ts";
import { parseMultipart, type ParsedUpload } from "../../http/multipart.ts";
import { byteBudgetOf } from "../../http/rate-limit.ts";
import { withinTagLimit, type AssetLibrary } from "../../library/asset-library.ts";
import type { AssetRouteContext } from "./context.ts";

/** Where ComfyUI files new content; exactly one must be among the tags of an upload of new bytes. */
const DESTINATIONS = ["input", "output", "models"];

/** `hash` as sent, or null when empty; 400 `INVALID_HASH` when it is not blake3 (assetHashHex). */
export function providedHash(raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === "") return null;
  return assetHashHex(raw);
}

/** `tags` fields, each a JSON array or comma-separated, merged in order, duplicates dropped. */
function tagsOf(values: string[]): string[] {
  const tags: string[] = [];
  for (const value of values) {
    const text = value.trim();
    let items: unknown[] | null = null;
    if (text.startsWith("[")) {
      try {
        const parsed: unknown = JSON.parse(text);
        if (Array.isArray(parsed)) items = parsed;
      } catch {
        // not JSON: read as comma-separated, as ComfyUI does
      }
    }
    for (const item of items ?? text.split(",")) {
      if (typeof item !== "string") throw new ApiFailure("invalid_body", "tags: must be strings");
      if (item.trim() !== "") tags.push(item);
    }
  }
  return tags;
}

function userMetadataOf(raw: string | undefined): unknown {
  if (raw === undefined || raw.trim() === "") return {};
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new ApiFailure("invalid_body", `user_metadata must be JSON: ${(err as Error).message}`);
  }
}

/** The text fields, validated as ComfyUI's UploadAssetSpec (400 `INVALID_BODY` naming the field). */
export function fieldsOf(parsed: Pick<ParsedUpload, "fields" | "lists">): Fields {
  const name = parsed.fields.get("name");
  const mime = parsed.fields.get("mime_type")?.trim();
  const preview = parsed.fields.get("preview_id")?.trim();
  const result = UploadAssetFields.safeParse({
    tags: [...new Set(tagsOf(parsed.lists.get("tags") ?? []).map((t) => t.trim()))],
    ...(name?.trim() && { name }),
    user_metadata: userMetadataOf(parsed.fields.get("user_metadata")),
    ...(mime && { mime_type: mime }),
    ...(preview && { preview_id: preview }),
  });
  if (!result.success) throw new ApiFailure("invalid_body", describeIssue(result.error));
  if (result.data.tags.length === 0) throw new ApiFailure("invalid_body", "tags: must be provided and non-empty");
  return result.data;
}

/**
 * New bytes are filed by ComfyUI under their destination tag: exactly one of input, output or
 * models, and models with exactly one `model_type:<category>` naming one of its model folders
 * (MODEL_FOLDERS: not `configs` or `custom_nodes`, nor a category no loader reads). This service
 * keeps every byte in one content-addressed store, so the rule is kept for what clients rely on
 * (the tags say what the asset is for), not for a folder. A record for known bytes needs no
 * destination, as in ComfyUI. Answers the model category (null for input and output).
 */
export function checkDestination(tags: string[]): string | null {
  const roles = tags.filter((t) => DESTINATIONS.includes(t));
  if (roles.length !== 1) {
    throw new ApiFailure("invalid_body", `tags: new content needs exactly one destination tag (${DESTINATIONS.join(", ")}); got ${roles.length}`);
  }
  const modelTypes = tags.filter((t) => t.startsWith("model_type:") && t.length > "model_type:".length);
  if (roles[0] !== "models") return null;
  if (modelTypes.length !== 1) {
    throw new ApiFailure("invalid_body", `tags: a models upload needs exactly one model_type:<category> tag; got ${modelTypes.length}`);
  }
  const category = modelTypes[0]!.slice("model_type:".length);
  if (!MODEL_FOLDERS.has(category)) {
    throw new ApiFailure("invalid_body", `tags: model_type:${category.slice(0, 100)} is not a model folder (one of ${[...MODEL_FOLDERS].join(", ")})`);
  }
  return category;
}

/**
 * POST /api/assets: ComfyUI's multipart upload of any asset (`file`, `tags`, `name`,
 * `user_metadata`, `hash`, `mime_type`, `preview_id`). The file streams through the blake3
 * hasher into the content-addressed store as /api/upload/image's does, never held whole; its
 * limit is ASSET_UPLOAD_MAX_BYTES and its timeout counts from the last byte received. A `hash`
 * sent before the file naming stored content makes the file be read and dropped unstored (the
 * shortcut; with no file at all it is the whole request). 201 with `created_new: true` when the
 * bytes were new, 200 when only a record was added.
 */
export function uploadRoute(router: Router, prefix: string, { deps, library, access }: AssetRouteContext): void {
  router.post(`${prefix}/assets`, access.upload, async (req, res) => {
    const owner = ownerOf(res);
    if (!/^multipart\//i.test(req.headers["content-type"] ?? "")) {
      throw new ApiFailure("unsupported_media_type", "Use multipart/form-data for uploads.");
    }
    let knownHash: string | null = null;
    const parsed = await parseMultipart(
      req,
      deps.blobs,
      { maxBytes: deps.settings.assetMaxBytes, bodyTimeoutMs: deps.settings.bodyTimeoutMs },
      byteBudgetOf(res),
      {
        fileField: "file",
        idleTimeout: true,
        beforeFile: async (fields) => {
          const hash = providedHash(fields.get("hash"));
          if (hash && (await deps.blobs.stat(hash))) knownHash = hash;
          return knownHash ? "drain" : "stage";
        },
      },
    );
    try {
      const fields = fieldsOf(parsed);
      const hash = providedHash(parsed.fields.get("hash"));
      await library.checkPreview(owner, fields.preview_id);
      let answer: { created: AssetCreated; status: number };
      if (parsed.file) answer = await storeNewUpload(library, deps.settings.previewUrls, owner, parsed, parsed.file, fields, hash);
      else answer = await recordKnownHash(library, deps.settings.previewUrls, owner, parsed, fields, knownHash ?? hash);
      res.status(answer.status).json(answer.created);
    } finally {
      await parsed.file?.discard();
    }
  });
}

/**
 * New bytes, staged, become the owner's asset: POST /api/assets' file part, and a tus upload
 * whose last byte has landed. `parsed`: the file's first bytes (1 MiB, for the content probe) and
 * the client's filename.
 */
export async function storeNewUpload(
  library: AssetLibrary,
  previews: PreviewUrls,
  owner: string,
  parsed: Pick<ParsedUpload, "head" | "fileName">,
  file: StagedBlob,
  fields: Fields,
  expected: string | null,
) {
  if (file.size === 0) throw new ApiFailure("empty_upload", "Uploaded file is empty.");
  if (expected && expected !== file.hash) {
    throw new ApiFailure("hash_mismatch", `the file's hash is blake3:${file.hash}, not the blake3:${expected} sent`, {
      details: { expected: `blake3:${expected}`, actual: `blake3:${file.hash}` },
    });
  }
  const newBytes = !(await library.blobs.stat(file.hash));
  const category = newBytes ? checkDestination(fields.tags) : null;
  const info = await probeContent(parsed.head, file.localPath ?? parsed.head, fields.mime_type);
  const filename = `${file.hash}.${info.ext}`;
  const name = fields.name ?? (parsed.fileName?.trim() || filename);
  const { reference, bytesCreated } = await withinTagLimit(() =>
    library.commitUpload(file, info, fields.tags.slice(0, MAX_TAGS_PER_ASSET), {
      owner,
      tags: fields.tags,
      name,
      // As ComfyUI records it: the stored file's name, unless the client gave its own.
      userMetadata: "filename" in fields.user_metadata ? fields.user_metadata : { ...fields.user_metadata, filename },
      ...(fields.preview_id && { previewId: fields.preview_id }),
      // The loader's file name, for a record whose upload wrote the file (not for known bytes).
      ...(newBytes && { systemMetadata: fileNames(file.hash, name, category) }),
    }),
  );
  return { created: { ...(await toAsset(reference, library.references, previews)), created_new: bytesCreated }, status: bytesCreated ? 201 : 200 };
}

async function recordKnownHash(library: AssetLibrary, previews: PreviewUrls, owner: string, parsed: ParsedUpload, fields: Fields, hash: string | null) {
  if (!hash || (!parsed.filePresent && !(await library.blobs.stat(hash)))) {
    throw new ApiFailure("missing_file", "Form must include a 'file' part or a known 'hash'.");
  }
  const reference = await library.recordKnownContent(owner, hash, {
    ...(fields.name && { name: fields.name }),
    tags: fields.tags,
    userMetadata: fields.user_metadata,
    ...(fields.mime_type && { mimeType: fields.mime_type }),
    ...(fields.preview_id && { previewId: fields.preview_id }),
  });
  return { created: { ...(await toAsset(reference, library.references, previews)), created_new: false }, status: 200 };
}
