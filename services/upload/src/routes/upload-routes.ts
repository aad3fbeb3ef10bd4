import type { Request, Response } from "express";
import { jobIds, type MaskUploadResult, type UploadResult } from "@app/contracts";
import type { StagedBlob } from "@app/blobs";
import { probeImage, type ImageInfo } from "../adapters/probes/image-probe.ts";
import { UploadFailure } from "../domain/errors.ts";
import { validateSubfolder, validateType } from "../domain/fields.ts";
import { assetName } from "../domain/naming.ts";
import { originalRefOfForm } from "../domain/original-ref.ts";
import type { UploadDeps } from "./deps.ts";
import { parseMultipart, type ParsedUpload } from "./multipart.ts";
import { commitWithRecord, recordStoredAsset, uploadOrigin, uploadTags } from "./upload-records.ts";
import { byteBudgetOf } from "./rate-limit.ts";
import { ownerOf } from "./auth.ts";

/** POST /api/upload/image (and /upload/image). */
export function uploadImageHandler(deps: UploadDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const parsed = await parseMultipart(req, deps.store, deps.settings, byteBudgetOf(res));
    try {
      const subfolder = validateSubfolder(parsed.fields.get("subfolder"));
      const type = validateType(parsed.fields.get("type"));
      const image = requireImage(parsed);
      const info = await probe(parsed, image);
      await commitWithRecord(deps, image, storedImage(info), [type], {
        owner: ownerOf(res),
        origin: uploadOrigin("upload", type, subfolder),
        tags: uploadTags(type, subfolder),
      });
      const body: UploadResult = { name: assetName(image.hash, info.format.ext), subfolder, type };
      res.status(200).json(body);
    } finally {
      await parsed.image?.discard();
    }
  };
}

/** POST /api/upload/mask (and /upload/mask). */
export function uploadMaskHandler(deps: UploadDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const parsed = await parseMultipart(req, deps.store, deps.settings, byteBudgetOf(res));
    try {
      const subfolder = validateSubfolder(parsed.fields.get("subfolder"));
      const type = validateType(parsed.fields.get("type"));
      const originalHash = originalRefOfForm(parsed.fields);
      const image = requireImage(parsed);
      const info = await probe(parsed, image);
      if (!(await deps.store.stat(originalHash))) {
        throw new UploadFailure("original_not_found", `original_ref names no stored image (blake3:${originalHash})`);
      }
      const owner = ownerOf(res);
      const { reference: maskRecord } = await commitWithRecord(deps, image, storedImage(info), [type, "mask", `original:${originalHash}`], {
        owner,
        origin: uploadOrigin("mask", type, subfolder),
        tags: uploadTags(type, "mask", subfolder),
        systemMetadata: { is_mask: true, original_hash: `blake3:${originalHash}` },
      });
      const data = { originalHash, maskHash: image.hash };
      const result = await deps.queue.run("mask.derive", data, {
        jobId: jobIds.maskDerive(data),
        timeoutMs: deps.settings.maskJobTimeoutMs,
      });
      const metadata: MaskUploadResult["metadata"] = {
        is_mask: true,
        original_hash: `blake3:${originalHash}`,
        mask_type: result.maskType,
        related_files: { mask: assetName(image.hash, info.format.ext), paint: result.paint, painted: result.painted },
      };
      await recordMaskLinks(deps, maskRecord.id, metadata, { owner, type, subfolder, maskHash: image.hash });
      const body: MaskUploadResult = { name: result.painted, subfolder, type, metadata };
      res.status(200).json(body);
    } finally {
      await parsed.image?.discard();
    }
  };
}

function requireImage(parsed: ParsedUpload): StagedBlob {
  if (parsed.image) return parsed.image;
  const asField = parsed.fields.has("image") ? " ('image' was sent as a text field, not a file)" : "";
  throw new UploadFailure("missing_image", `the multipart body has no 'image' file part${asField}`);
}

function probe(parsed: ParsedUpload, image: StagedBlob): Promise<ImageInfo> {
  if (image.size === 0) throw new UploadFailure("invalid_image", "the image part is empty");
  return probeImage(image.localPath ?? parsed.head);
}

/** The mask's record links its original and derivatives; each derivative gets its own record linking back. */
async function recordMaskLinks(
  deps: UploadDeps,
  maskRecordId: string,
  metadata: MaskUploadResult["metadata"],
  at: { owner: string; type: string; subfolder: string; maskHash: string },
): Promise<void> {
  await deps.refs.update(maskRecordId, at.owner, { systemMetadata: metadata });
  const derivedFrom = { original_hash: metadata.original_hash, mask_hash: `blake3:${at.maskHash}` };
  for (const kind of ["painted", "paint"] as const) {
    await recordStoredAsset(deps, metadata.related_files[kind], {
      owner: at.owner,
      origin: uploadOrigin("derived", at.type, at.subfolder),
      tags: uploadTags(at.type, "derived", kind, at.subfolder),
      systemMetadata: { derived: kind, ...derivedFrom },
    });
  }
}

const storedImage = (info: ImageInfo) => ({ ...info.format, width: info.width, height: info.height });
