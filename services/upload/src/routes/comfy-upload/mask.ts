import type { Request, Response } from "express";
import { jobIds, type MaskUploadResult } from "@app/contracts";
import { ApiFailure } from "../../domain/errors.ts";
import { validateSubfolder, validateType } from "../../domain/fields.ts";
import { assetName } from "../../domain/naming.ts";
import { originalRefOfForm } from "../../domain/original-ref.ts";
import { ownerOf } from "../../http/auth.ts";
import type { UploadDeps } from "../../http/deps.ts";
import type { AssetLibrary } from "../../library/asset-library.ts";
import { uploadOrigin, uploadTags } from "../../library/reference-fields.ts";
import { probe, requireImage, storedImage, withUploadForm } from "./upload-form.ts";

/** POST /api/upload/mask (and /upload/mask): stores the mask, waits for the `mask.derive` job, links the derivatives. */
export function uploadMaskHandler(deps: UploadDeps, library: AssetLibrary) {
  return (req: Request, res: Response): Promise<void> =>
    withUploadForm(req, res, deps, async (parsed) => {
      const subfolder = validateSubfolder(parsed.fields.get("subfolder"));
      const type = validateType(parsed.fields.get("type"));
      const originalHash = originalRefOfForm(parsed.fields);
      const image = requireImage(parsed);
      const info = await probe(parsed, image);
      if (!(await deps.blobs.stat(originalHash))) {
        throw new ApiFailure("original_not_found", `original_ref names no stored image (blake3:${originalHash})`);
      }
      const owner = ownerOf(res);
      const { reference: maskReference } = await library.commitUpload(
        image,
        storedImage(info),
        [type, "mask", `original:${originalHash}`],
        {
          owner,
          origin: uploadOrigin("mask", type, subfolder),
          tags: uploadTags(type, "mask", subfolder),
          systemMetadata: { is_mask: true, original_hash: `blake3:${originalHash}` },
        },
      );
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
      await library.recordMaskLinks(maskReference.id, metadata, { owner, type, subfolder, maskHash: image.hash });
      const body: MaskUploadResult = { name: result.painted, subfolder, type, metadata };
      res.status(200).json(body);
    });
}
