import { MAX_TAGS_PER_ASSET, type MaskUploadResult, type UploadAssetFields } from "@app/contracts";
import { metrics } from "@app/platform";
import { mergeSidecar, type BlobStore, type StagedBlob } from "@app/blobs";
import { TooManyTagsError, type ReferenceStore } from "../adapters/references/reference-store.ts";
import { probeContent } from "../adapters/probes/content-probe.ts";
import type { AssetReference, ReferencePatch } from "../domain/asset-reference.ts";
import { extensionOf, fileNames } from "../domain/asset-view.ts";
import { bareMime } from "../domain/content-type.ts";
import { destinationCategory } from "../domain/destination.ts";
import { ApiFailure } from "../domain/errors.ts";
import { formatFromExt, parseAssetName } from "../domain/naming.ts";
import { uploadOrigin, uploadTags, type ReferenceFields, type StoredContent } from "./reference-fields.ts";

/**
 * The work behind the routes: what an upload records, over the blob store (bytes and their
 * sidecars) and the reference store (the asset API's records). Routes parse and answer HTTP;
 * everything here runs without Express.
 */
export class AssetLibrary {
  constructor(
    readonly blobs: BlobStore,
    readonly references: ReferenceStore,
  ) {}

  /**
   * Publish staged bytes, merge their sidecar and make (or find) the asset reference, as one
   * step under the hash lock: deleting the last reference of the same bytes cannot slip in
   * between and remove bytes this upload has just been told are stored.
   */
  async commitUpload(
    file: StagedBlob,
    content: StoredContent,
    sidecarTags: string[],
    fields: ReferenceFields,
  ): Promise<{ reference: AssetReference; bytesCreated: boolean }> {
    return this.references.withHashLock(file.hash, async () => {
      const { created, sidecar } = await file.commit((existing) =>
        mergeSidecar(existing, {
          hash: file.hash,
          ext: content.ext,
          mime: content.mime,
          size: file.size,
          ...(content.width && content.height && { width: content.width, height: content.height }),
          tags: sidecarTags,
        }),
      );
      (created ? metrics.uploadsStored : metrics.dedupHits).inc();
      // Known bytes keep what their first upload recorded them as.
      const { reference } = await this.references.create({
        owner: fields.owner,
        hash: file.hash,
        name: fields.name ?? `${file.hash}.${sidecar.ext}`,
        size: file.size,
        mimeType: sidecar.mime,
        tags: fields.tags,
        ...(fields.userMetadata && { userMetadata: fields.userMetadata }),
        ...(fields.systemMetadata && { systemMetadata: fields.systemMetadata }),
        ...(fields.previewId && { previewId: fields.previewId }),
        ...(fields.origin && { origin: fields.origin }),
      });
      return { reference, bytesCreated: created };
    });
  }

  /**
   * An upload of new bytes needs a destination (`destinationCategory`); one whose bytes are
   * already stored does not, as in ComfyUI. Answers whether the bytes are new and their model
   * category (null for input, output and known bytes).
   */
  async checkDestination(tags: string[], hash: string | null): Promise<{ newBytes: boolean; category: string | null }> {
    const newBytes = !(hash && (await this.blobs.stat(hash)));
    return { newBytes, category: newBytes ? destinationCategory(tags) : null };
  }

  /**
   * New bytes, staged, become the owner's asset: POST /api/assets' file part, and a tus upload
   * whose last byte has landed. `upload`: the file's first bytes (1 MiB, for the content probe)
   * and the client's filename; `expected`: the hash the client sent, if any.
   */
  async storeNewUpload(
    owner: string,
    file: StagedBlob,
    upload: { head: Buffer; fileName: string | null },
    fields: UploadAssetFields,
    expected: string | null,
  ): Promise<{ reference: AssetReference; bytesCreated: boolean }> {
    if (file.size === 0) throw new ApiFailure("empty_upload", "Uploaded file is empty.");
    if (expected && expected !== file.hash) {
      throw new ApiFailure("hash_mismatch", `the file's hash is blake3:${file.hash}, not the blake3:${expected} sent`, {
        details: { expected: `blake3:${expected}`, actual: `blake3:${file.hash}` },
      });
    }
    const { newBytes, category } = await this.checkDestination(fields.tags, file.hash);
    const given = fields.name ?? upload.fileName?.trim();
    const info = await probeContent(upload.head, file.localPath ?? upload.head, fields.mime_type, given);
    // As ComfyUI records it: the hash and the extension of the name it was given (the probed one when that has none).
    const filename = `${file.hash}${(given && extensionOf(given)) || `.${info.ext}`}`;
    const name = given || filename;
    return withinTagLimit(() =>
      this.commitUpload(file, info, fields.tags.slice(0, MAX_TAGS_PER_ASSET), {
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
  }

  /** A reference for a derivative the mask job stored (under `name`), unless its bytes are gone. */
  async recordStoredAsset(name: string, fields: ReferenceFields): Promise<void> {
    const parsed = parseAssetName(name);
    if (!parsed) return;
    await this.references.withHashLock(parsed.hash, async () => {
      const stat = await this.blobs.stat(parsed.hash);
      if (!stat) return;
      await this.references.create({
        owner: fields.owner,
        hash: parsed.hash,
        name: `${parsed.hash}.${parsed.ext}`,
        size: stat.size,
        mimeType: formatFromExt(parsed.ext)?.mime ?? "application/octet-stream",
        tags: fields.tags,
        ...(fields.systemMetadata && { systemMetadata: fields.systemMetadata }),
        ...(fields.origin && { origin: fields.origin }),
      });
    });
  }

  /**
   * A reference of the owner's for bytes already stored (from-hash, and POST /api/assets with a
   * known hash): named by the hash unless a name is given, typed as the bytes were recorded
   * (the client's `mime_type` only when the store has no sidecar for them). 404 `ASSET_NOT_FOUND`
   * when the bytes are not stored.
   */
  async recordKnownContent(
    owner: string,
    hash: string,
    input: { name?: string; tags: string[]; userMetadata: Record<string, unknown>; mimeType?: string; previewId?: string },
  ): Promise<AssetReference> {
    return withinTagLimit(() =>
      this.references.withHashLock(hash, async () => {
        const stat = await this.blobs.stat(hash);
        if (!stat)
          throw new ApiFailure("asset_not_found", `Asset content blake3:${hash} does not exist`, { details: { hash: `blake3:${hash}` } });
        const sidecar = await this.blobs.getSidecar(hash);
        const { reference } = await this.references.create({
          owner,
          hash,
          name: input.name ?? hash,
          size: stat.size,
          mimeType: sidecar?.mime ?? (input.mimeType ? bareMime(input.mimeType) : "application/octet-stream"),
          tags: input.tags,
          userMetadata: input.userMetadata,
          ...(input.previewId && { previewId: input.previewId }),
        });
        return reference;
      }),
    );
  }

  /** `preview_id` must name another reference of the same owner. */
  async checkPreview(owner: string, previewId: string | null | undefined): Promise<void> {
    if (!previewId) return;
    if (!(await this.references.get(previewId, owner))) {
      throw new ApiFailure("invalid_body", `preview_id: no asset ${previewId} of yours`, { details: { preview_id: previewId } });
    }
  }

  /** Replace a reference's fields, its preview checked and its tags within the limit; null when it is gone. */
  async update(ref: AssetReference, patch: ReferencePatch): Promise<AssetReference | null> {
    await this.checkPreview(ref.owner, patch.previewId);
    return withinTagLimit(() => this.references.update(ref.id, ref.owner, patch));
  }

  /** Add tags, refused whole (nothing added) when the reference would pass MAX_TAGS_PER_ASSET; null when it is gone. */
  addTags(ref: AssetReference, tags: string[]): ReturnType<ReferenceStore["addTags"]> {
    return withinTagLimit(() => this.references.addTags(ref.id, ref.owner, tags));
  }

  /** The mask's reference links its original and derivatives; each derivative gets its own reference linking back. */
  async recordMaskLinks(
    maskReferenceId: string,
    metadata: MaskUploadResult["metadata"],
    at: { owner: string; type: string; subfolder: string; maskHash: string },
  ): Promise<void> {
    await this.references.update(maskReferenceId, at.owner, { systemMetadata: metadata });
    const derivedFrom = { original_hash: metadata.original_hash, mask_hash: `blake3:${at.maskHash}` };
    for (const kind of ["painted", "paint"] as const) {
      await this.recordStoredAsset(metadata.related_files[kind], {
        owner: at.owner,
        origin: uploadOrigin("derived", at.type, at.subfolder),
        tags: uploadTags(at.type, "derived", kind, at.subfolder),
        systemMetadata: { derived: kind, ...derivedFrom },
      });
    }
  }
}

/** Over the one tag limit (MAX_TAGS_PER_ASSET), on whichever path adds tags: 400 `INVALID_BODY`. */
export async function withinTagLimit<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof TooManyTagsError) throw new ApiFailure("invalid_body", `tags: ${err.message}`);
    throw err;
  }
}
