import type { Router } from "express";
import { MAX_TAGS_PER_ASSET, type AssetCreated, type UploadAssetFields } from "@app/contracts";
import { toAsset, type PreviewUrls } from "../../domain/asset-view.ts";
import { ApiFailure } from "../../domain/errors.ts";
import { fieldsOf, providedHash } from "../../http/asset-fields.ts";
import { ownerOf } from "../../http/auth.ts";
import { parseMultipart, type ParsedUpload } from "../../http/multipart.ts";
import { byteBudgetOf } from "../../http/rate-limit.ts";
import type { AssetLibrary } from "../../library/asset-library.ts";
import type { AssetRouteContext } from "./context.ts";

/** One `tags` field per tag, up to the tag cap, beside the form's other fields (name, user_metadata, hash, mime_type, preview_id). */
const ASSET_FORM_FIELDS = MAX_TAGS_PER_ASSET + 8;

/**
 * POST /api/assets: ComfyUI's multipart upload of any asset (`file`, `tags`, `name`,
 * `user_metadata`, `hash`, `mime_type`, `preview_id`). The file streams through the blake3
 * hasher into the content-addressed store as /api/upload/image's does, never held whole; its
 * limit is ASSET_UPLOAD_MAX_BYTES and its timeout counts from the last byte received. A `hash`
 * sent before the file naming stored content makes the file be read and dropped unstored (the
 * shortcut; with no file at all it is the whole request). 201 with `created_new: true` when the
 * bytes were new, 200 when only a record was added.
 */
export function createAssetRoute(router: Router, prefix: string, { deps, library, access }: AssetRouteContext): void {
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
        maxFields: ASSET_FORM_FIELDS,
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
      if (parsed.file) {
        const { reference, bytesCreated } = await library.storeNewUpload(owner, parsed.file, parsed, fields, hash);
        const created = { ...(await toAsset(reference, library.references, deps.settings.previewUrls)), created_new: bytesCreated };
        res.status(bytesCreated ? 201 : 200).json(created);
      } else {
        res.status(200).json(await recordKnownHash(library, deps.settings.previewUrls, owner, parsed, fields, knownHash ?? hash));
      }
    } finally {
      await parsed.file?.discard();
    }
  });
}

async function recordKnownHash(
  library: AssetLibrary,
  previews: PreviewUrls,
  owner: string,
  parsed: ParsedUpload,
  fields: UploadAssetFields,
  hash: string | null,
): Promise<AssetCreated> {
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
  return { ...(await toAsset(reference, library.references, previews)), created_new: false };
}
